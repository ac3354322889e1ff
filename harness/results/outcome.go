package results

import (
	"encoding/json"
	"strings"
)

// Outcome is what a step amounts to. The testbed we replace published
// conclusions from empty responses and unequal limits; keeping "the
// application failed" apart from "we did not measure what was declared" is
// what lets a sweep say which of the two happened.
type Outcome string

const (
	// OutcomeValid: what was declared was measured, and the application
	// met the SLO at this level.
	OutcomeValid Outcome = "valid"
	// OutcomeBroken: what was declared was measured, and the application
	// failed under the load (latency, throughput, errors, shrinking
	// responses). A broken step is a measurement: it counts in breaking
	// points, early stop and sustained levels.
	OutcomeBroken Outcome = "broken"
	// OutcomeInvalid: what ran is not what was declared (unhealthy, limits
	// differ, probe or dataset check failed, load path wrong, generator
	// failed, partial or saturated). Excluded from statistics; `sweep
	// --resume` runs it again.
	OutcomeInvalid Outcome = "invalid"
)

// Measured reports whether the step measured what was declared (valid or
// broken) and so enters statistics. Skipped steps measured nothing.
func (r StepResult) Measured() bool {
	return !r.Skipped && (r.Outcome == OutcomeValid || r.Outcome == OutcomeBroken)
}

// Settled reports whether a resumed sweep keeps the step: everything but an
// invalid one, which is run again.
func (r StepResult) Settled() bool { return r.Outcome != OutcomeInvalid }

// Decide sets Outcome and Reasons from the gates: a failed gate that is not
// a measurement makes the step invalid; otherwise a failed measurement
// check (Gate.Breaks) makes it broken. Checks that could not apply
// (NotChecked) change nothing, but stay visible in the archive.
func (r *StepResult) Decide() {
	var invalid, broken []string
	for _, g := range r.Gates {
		if g.Passed || g.NotChecked {
			continue
		}
		if g.Breaks {
			broken = append(broken, g.text())
		} else {
			invalid = append(invalid, g.text())
		}
	}
	switch {
	case len(invalid) > 0:
		r.Outcome, r.Reasons = OutcomeInvalid, invalid
	case len(broken) > 0:
		r.Outcome, r.Reasons = OutcomeBroken, broken
	default:
		r.Outcome, r.Reasons = OutcomeValid, nil
	}
}

func (g Gate) text() string {
	if g.Detail == "" {
		return g.Name
	}
	return g.Name + ": " + g.Detail
}

// OutcomeText is the outcome with its reasons, for step lines and tables.
func (r StepResult) OutcomeText() string {
	if len(r.Reasons) == 0 {
		return strings.ToUpper(string(r.Outcome))
	}
	return strings.ToUpper(string(r.Outcome)) + " (" + strings.Join(r.Reasons, "; ") + ")"
}

// legacyStep reads the fields of summaries written before outcomes existed.
type legacyStep struct {
	Valid *bool `json:"valid"`
}

// upgrade gives a summary from an older archive its outcome: "valid" then
// meant every gate passed (the SLO was judged on medians only, which
// Summarize still does), and early-stopped steps had one gate.
func (r *StepResult) upgrade(raw []byte) {
	if r.Outcome != "" {
		return
	}
	var old legacyStep
	_ = json.Unmarshal(raw, &old)
	switch {
	case old.Valid != nil && *old.Valid:
		r.Outcome = OutcomeValid
	case len(r.Gates) == 1 && r.Gates[0].Name == GateEarlyStop:
		r.Skipped = true
		r.Outcome, r.Reasons = OutcomeBroken, []string{r.Gates[0].Detail}
	default:
		r.Outcome, r.Reasons = OutcomeInvalid, r.FailedGates()
	}
}
