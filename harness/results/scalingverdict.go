package results

import (
	"fmt"
	"strings"
)

// RuleRecovery: in most repetitions of a scaling step the SLO did not hold
// again within the settle time after the step up. A scaling step is judged
// by its recovery, not by its whole-step p99: the backlog of the step up
// is what an autoscaler is measured on, and it would break every such
// level whatever the autoscaler did.
const RuleRecovery = "recovery"

// scalingSLO is a scaling step's own SLO verdict, the gate that replaced
// the whole-step SLO gate on it (gates.ScalingSLOGate). A step with no
// such gate recorded says nothing and counts as held.
func (r StepResult) scalingSLO() (held bool, detail string) {
	for _, g := range r.Gates {
		if g.Name == GateSLO && !g.NotChecked {
			return g.Passed, g.Detail
		}
	}
	return true, ""
}

// scalingViolations is Violations for a scaling step.
func scalingViolations(r StepResult) (rules, details []string) {
	if held, detail := r.scalingSLO(); !held {
		return []string{RuleRecovery}, []string{detail}
	}
	return nil, nil
}

// recoveries counts a level's scaling repetitions whose SLO never held
// again in time, with the first one's reason.
type recoveries struct {
	steps, missed int
	first         string
}

func (c *recoveries) add(r StepResult) {
	c.steps++
	if held, detail := r.scalingSLO(); !held {
		if c.missed == 0 {
			c.first = fmt.Sprintf("%s (rep %d)", orNone(detail), r.Rep)
		}
		c.missed++
	}
}

// rule breaks the level when most of its reps (measured and skipped below)
// did not recover in time.
func (c recoveries) rule(reps, skipped int) (rules, details []string) {
	if 2*(c.missed+skipped) <= reps {
		return nil, nil
	}
	var parts []string
	if c.missed > 0 {
		parts = append(parts, fmt.Sprintf("the SLO did not hold again within the settle time in %d of %d repetitions: %s", c.missed, reps, c.first))
	}
	if skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d broke at a lower level", skipped, reps))
	}
	return []string{RuleRecovery}, []string{strings.Join(parts, "; ")}
}
