package sweep

import (
	"fmt"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/results"
)

// lowestLevels keeps, for every configuration and repetition, the bodies of
// the lowest level measured so far: the reference its higher levels' bodies
// are held to.
type lowestLevels map[string]measuredLevel

type measuredLevel struct {
	level loadLevel
	lower gates.LowerLevel
}

// loadLevel orders a configuration's steps: by rate in open loop, by users
// in closed loop (a configuration has one or the other).
type loadLevel struct {
	rate  float64
	users int
}

func levelOf(st experiment.Step) loadLevel { return loadLevel{st.OfferedRPS, st.Users} }

func (l loadLevel) below(o loadLevel) bool {
	return l.rate < o.rate || (l.rate == o.rate && l.users < o.users)
}

func runKey(st experiment.Step) string { return fmt.Sprintf("%s/rep%d", st.Configuration(), st.Rep) }

// record keeps a measured step's bodies when its level is the lowest of its
// run so far. A step whose responses shrank is no reference, nor is one
// not measured (invalid, skipped).
func (l lowestLevels) record(st experiment.Step, sr results.StepResult) {
	if !sr.Measured() || len(sr.Endpoints) == 0 {
		return
	}
	for _, g := range sr.Gates {
		if g.Name == gates.Responses && !g.Passed && !g.NotChecked {
			return
		}
	}
	if have, ok := l[runKey(st)]; ok && !levelOf(st).below(have.level) {
		return
	}
	l[runKey(st)] = measuredLevel{level: levelOf(st), lower: gates.LowerLevel{Step: st.ID, Endpoints: sr.Endpoints}}
}

// below is the lowest level measured under st's in its run, nil when st's
// is the lowest so far.
func (l lowestLevels) below(st experiment.Step) *gates.LowerLevel {
	have, ok := l[runKey(st)]
	if !ok || !have.level.below(levelOf(st)) {
		return nil
	}
	return &have.lower
}
