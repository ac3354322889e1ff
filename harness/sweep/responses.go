package sweep

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// BodyReference is the mean body an endpoint's responses under load are
// held to, and where it was measured.
type BodyReference struct {
	Mean   float64
	Source string
}

// BodyReferences are the references by endpoint label.
type BodyReferences map[string]BodyReference

// lowerLevel is one step's per-endpoint bodies, measured at a lower level
// of the same configuration and repetition than the step judged.
type lowerLevel struct {
	Step      string
	Endpoints []results.EndpointStats
}

// bodyReferences picks each endpoint's reference: its mean at the lowest
// level measured below this one, else in this run's warm-up (at the same
// rate, but before the measurement), else in the opening responses of the
// measured window (a run without warm-up, such as an iterations step).
// The first of these that saw the endpoint complete a response wins.
func bodyReferences(lower *lowerLevel, res *loadgen.Result) BodyReferences {
	refs := BodyReferences{}
	add := func(b loadgen.EndpointBodies, source string) {
		if _, ok := refs[b.Label]; ok {
			return
		}
		if mean, ok := b.MeanBody(); ok {
			refs[b.Label] = BodyReference{Mean: mean, Source: source}
		}
	}
	if lower != nil {
		for _, e := range lower.Endpoints {
			add(loadgen.EndpointBodies{Label: e.Name, Completed: e.Completed, BodyBytes: e.BodyBytes}, "at the lower level "+lower.Step)
		}
	}
	if res.Warmup != nil {
		for _, b := range res.Warmup.Endpoints {
			add(b, "in the warm-up")
		}
	}
	for _, b := range res.Opening {
		add(b, "in the opening responses")
	}
	return refs
}

// ResponsesGate holds every endpoint's mean response body under load to at
// least half of its reference (an emptied cache or store shows as short
// answers), and the endpoint the probe covers to half of the probe's body
// too. An endpoint that completed no response while others answered failed
// too. Failing it is a measurement of the application (broken), as is any
// other way of failing under load. Headers are not counted: they alone
// would fill half of a small body.
func ResponsesGate(p Probe, probeBody int, refs BodyReferences, res *loadgen.Result) results.Gate {
	g := results.Gate{Name: GateResponses, Breaks: true}
	var shrunk, silent, held, unreferenced []string
	answered := false
	for _, e := range res.Endpoints {
		if e.Completed == 0 {
			silent = append(silent, e.Label+": no completed response")
			continue
		}
		answered = true
		mean := float64(e.BodyBytes) / float64(e.Completed)
		text := fmt.Sprintf("%s: %.0f body bytes on average", e.Label, mean)
		var under, over []string
		hold := func(bound float64, name string) {
			if mean < bound/2 {
				under = append(under, name)
			} else {
				over = append(over, name)
			}
		}
		if ref, ok := refs[e.Label]; ok {
			hold(ref.Mean, fmt.Sprintf("%.0f %s", ref.Mean, ref.Source))
		}
		if probeBody > 0 && p.covers(e.Label) {
			hold(float64(probeBody), fmt.Sprintf("probe %d", probeBody))
		}
		switch {
		case len(under) > 0:
			text += ", under half of " + strings.Join(under, " and ")
			if len(over) > 0 {
				text += " (reference " + strings.Join(over, ", ") + ")"
			}
			shrunk = append(shrunk, text)
		case len(over) > 0:
			held = append(held, text+" (reference "+strings.Join(over, ", ")+")")
		default:
			unreferenced = append(unreferenced, text+" (no reference: not answered at a lower level, in a warm-up or an opening)")
		}
	}
	all := append(append(append(append([]string{}, shrunk...), silent...), held...), unreferenced...)
	switch {
	case len(shrunk) > 0:
		g.Detail = "responses shrank under load: " + strings.Join(all, "; ")
	case len(silent) > 0 && answered:
		g.Detail = "an endpoint stopped answering while the others answered: " + strings.Join(all, "; ")
	case len(held) == 0:
		// with nothing answered the SLO's error rule judges the step
		g.NotChecked = true
		g.Detail = "no endpoint's responses could be held to a reference"
		if len(all) > 0 {
			g.Detail += ": " + strings.Join(all, "; ")
		}
	default:
		g.Passed = true
		g.Detail = strings.Join(all, "; ")
	}
	return g
}

// covers reports whether an endpoint label is the probe's request: a GET of
// its path, once the generator's {id} placeholders are applied to both
// (the probe's /books/2 and a script's "GET /books/1" are both
// "GET /books/{id}"). A label without a method is a GET's.
func (p Probe) covers(label string) bool {
	method, path, found := strings.Cut(label, " ")
	if !found {
		method, path = "GET", label
	}
	return method == "GET" && loadgen.EndpointLabel("GET", path) == loadgen.EndpointLabel("GET", p.Path)
}

// lowestLevels keeps, for every configuration and repetition, the bodies of
// the lowest level measured so far: the reference its higher levels' bodies
// are held to.
type lowestLevels map[string]measuredLevel

type measuredLevel struct {
	level loadLevel
	lower lowerLevel
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
		if g.Name == GateResponses && !g.Passed && !g.NotChecked {
			return
		}
	}
	if have, ok := l[runKey(st)]; ok && !levelOf(st).below(have.level) {
		return
	}
	l[runKey(st)] = measuredLevel{level: levelOf(st), lower: lowerLevel{Step: st.ID, Endpoints: sr.Endpoints}}
}

// below is the lowest level measured under st's in its run, nil when st's
// is the lowest so far.
func (l lowestLevels) below(st experiment.Step) *lowerLevel {
	have, ok := l[runKey(st)]
	if !ok || !have.level.below(levelOf(st)) {
		return nil
	}
	return &have.lower
}
