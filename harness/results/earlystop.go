package results

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/experiment"
)

// EarlyStop remembers, during a sweep with early_stop, the lowest level at
// which each repetition of a configuration broke its SLO, so the runner can
// skip that repetition's higher levels. Repetitions are kept apart: each is
// an ascending series of its own, and stopping all of them at the first
// break of any one would censor the others at a level a noisy step picked,
// so the medians above it (and the breaking point) could never be measured.
// Invalid steps say nothing about the configuration and are ignored; a
// broken step, for whatever reason, stops its repetition.
type EarlyStop struct {
	SLO    experiment.SLO
	broken map[string]brokenAt
}

func repKey(configuration string, rep int) string { return fmt.Sprintf("%s#%d", configuration, rep) }

type brokenAt struct {
	level string
	key   float64 // offered rps, or users for closed loop
	why   string
}

// NewEarlyStop starts with nothing broken; on --resume, Record every
// completed step first.
func NewEarlyStop(slo experiment.SLO) *EarlyStop {
	return &EarlyStop{SLO: slo, broken: map[string]brokenAt{}}
}

func levelKey(rate float64, users int) float64 {
	if users > 0 {
		return float64(users)
	}
	return rate
}

// Record notes a finished step and reports whether it broke the SLO.
func (e *EarlyStop) Record(r StepResult) (broke bool, rules []string) {
	if r.Skipped || r.Outcome != OutcomeBroken {
		return false, nil
	}
	rules, details := Violations(r, e.SLO)
	if len(details) == 0 {
		// broken by a check other than the SLO's medians (responses shrank)
		details = r.Reasons
	}
	k := levelKey(r.OfferedRPS, r.Users)
	key := repKey(r.Configuration(), r.Rep)
	if b, ok := e.broken[key]; !ok || k < b.key {
		e.broken[key] = brokenAt{
			level: experiment.Step{OfferedRPS: r.OfferedRPS, Users: r.Users}.Level(),
			key:   k,
			why:   r.Step + ": " + strings.Join(details, "; "),
		}
	}
	return true, rules
}

// Skip reports whether a planned step is above a level at which the same
// repetition of its configuration already broke, and why.
func (e *EarlyStop) Skip(st experiment.Step) (bool, string) {
	b, ok := e.broken[repKey(st.Configuration(), st.Rep)]
	if !ok || levelKey(st.OfferedRPS, st.Users) <= b.key {
		return false, ""
	}
	return true, fmt.Sprintf("%s repetition %d broke at %s (%s)", st.Configuration(), st.Rep, b.level, b.why)
}
