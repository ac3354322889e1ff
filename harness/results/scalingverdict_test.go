package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
)

var scalingLevelSLO = experiment.SLO{P99Ms: 250, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}

// scalingStep is a scaling step whose whole-step p99 is the step up's
// backlog (far above the SLO), judged by whether the SLO held again in
// time, as gates.ScalingSLOGate records it.
func scalingStep(rep int, recovered bool) StepResult {
	r := sweptStep("taewa", 600, 0, rep, scalingLevelSLO, 12_000, 40_000, 0, "")
	recovery := 70.0
	rec := &ScalingRecord{Scaler: "nomad-autoscaler", SettleSeconds: 240, StepUpSeconds: 30, StartCount: 1, PeakCount: 4, FinalCount: 4}
	verdict := Gate{Name: GateSLO, Breaks: true, Passed: true, Detail: "the SLO held again 70 s after the step up (settle 240 s)"}
	if recovered {
		rec.RecoverySeconds = &recovery
	} else {
		verdict = Gate{Name: GateSLO, Breaks: true, Detail: "the SLO (p99 250 ms, error ratio 0.0100) did not hold again after the step up at 30 s before the load ended"}
	}
	r.Scaling = rec
	for i, g := range r.Gates {
		if g.Name == GateSLO {
			r.Gates[i] = verdict
		}
	}
	r.Reasons = nil
	r.Decide()
	return r
}

func TestScalingLevelIsJudgedByItsRecoveryNotItsWholeStepP99(t *testing.T) {
	held := []StepResult{scalingStep(1, true), scalingStep(2, true), scalingStep(3, true)}
	for _, r := range held {
		if r.Outcome != OutcomeValid {
			t.Fatalf("%s: outcome %s (%v), want valid", r.Step, r.Outcome, r.Reasons)
		}
		if rules, _ := Violations(r, scalingLevelSLO); len(rules) > 0 {
			t.Errorf("%s recovered in time but violates %v", r.Step, rules)
		}
	}
	levels := Summarize(held, scalingLevelSLO)
	if len(levels) != 1 || levels[0].Breaks() {
		t.Fatalf("three repetitions that recovered in time: levels %+v, want one that holds", levels)
	}
	var out bytes.Buffer
	if err := FormatShow(&out, &SweepRecord{ID: "s", Spec: &experiment.Sweep{Name: "autoscale", SLO: scalingLevelSLO}}, held); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "BROKEN") || !strings.Contains(out.String(), "not reached up to r600") {
		t.Errorf("the summary judges the backlog of the step up:\n%s", out.String())
	}

	// The gate fails: two of three never got back to the SLO.
	missed := []StepResult{scalingStep(1, false), scalingStep(2, true), scalingStep(3, false)}
	if rules, details := Violations(missed[0], scalingLevelSLO); len(rules) != 1 || rules[0] != RuleRecovery || !strings.Contains(details[0], "did not hold again") {
		t.Errorf("a scaling step that never recovered: rules %v (%v), want %s", rules, details, RuleRecovery)
	}
	levels = Summarize(missed, scalingLevelSLO)
	if len(levels) != 1 || len(levels[0].Rules) != 1 || levels[0].Rules[0] != RuleRecovery {
		t.Fatalf("two of three did not recover: levels %+v, want the recovery rule alone", levels)
	}
	if d := levels[0].Details[0]; !strings.Contains(d, "2 of 3 repetitions") || !strings.Contains(d, "(rep 1)") {
		t.Errorf("detail %q does not say how many and why", d)
	}
	bp := WithSustained(BreakingPoints(levels), missed, scalingLevelSLO)
	if len(bp) != 1 || !bp[0].Reached || bp[0].Unbroken != 1 {
		t.Errorf("breaking points %+v: want r600 reached, one repetition unbroken", bp)
	}

	// One of three alone does not break the level.
	if levels := Summarize([]StepResult{scalingStep(1, false), scalingStep(2, true), scalingStep(3, true)}, scalingLevelSLO); levels[0].Breaks() {
		t.Errorf("one of three missed: rules %v, want the level to hold", levels[0].Rules)
	}
}
