package results

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
)

// defaultSLO is what a spec without an slo block gets (experiment's parser
// default): no p99 rule, and closed loop has no throughput rule either.
var defaultSLO = experiment.SLO{MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}

// sweptStep is a step with the gates the sweep fills in: deployment and
// load checks passed, the SLO judged on the step's own figures, responses
// kept their size, and taskEvents (when not empty) the orchestrator's
// report of a task the step did not disturb.
func sweptStep(app string, rate float64, users, rep int, slo experiment.SLO, p99 float64, requests, errors int64, taskEvents string) StepResult {
	st := experiment.Step{ID: experiment.StepID(app, "nomad", "baseline", rate, users, rep), App: app, Orchestrator: "nomad", Variant: "baseline", OfferedRPS: rate, Users: users, Rep: rep}
	start := time.UnixMilli(1_700_000_000_000)
	achieved := rate
	if users > 0 {
		achieved = float64(users) * 50
	}
	r := StepResult{
		Labels: LabelsFor("s", st), AchievedRPS: achieved, DueRPS: rate, Requests: requests, Errors: errors,
		Corrected: Latency{P50: p99 / 4, P90: p99 / 2, P99: p99, P999: p99 * 1.5},
		Start:     start, End: start.Add(30 * time.Second),
	}
	r.Gates = []Gate{
		{Name: "healthy", Passed: true, Detail: "2 of 2 tasks running"},
		{Name: "limits", Passed: true, Detail: "web 0.5 cores enforced"},
		{Name: "probe", Passed: true, Detail: "200, 2314 bytes"},
		{Name: "load-path", Passed: true},
	}
	if rules, details := Violations(r, slo); len(rules) > 0 {
		r.Gates = append(r.Gates, Gate{Name: GateSLO, Breaks: true, Detail: strings.Join(details, "; ")})
	} else {
		r.Gates = append(r.Gates, Gate{Name: GateSLO, Breaks: true, Passed: true, Detail: fmt.Sprintf("p99 %.1f ms", p99)})
	}
	r.Gates = append(r.Gates, Gate{Name: GateResponses, Breaks: true, Passed: true, Detail: "mean body 2314 bytes, probe 2314"})
	if taskEvents != "" {
		r.Gates = append(r.Gates, Gate{Name: "task-events", Breaks: true, Detail: taskEvents})
	} else {
		r.Gates = append(r.Gates, Gate{Name: "task-events", Breaks: true, Passed: true, Detail: "no task started, stopped or restarted during the load"})
	}
	r.Decide()
	return r
}

// skippedStep is what the runner archives for a repetition above its break.
func skippedStep(app string, rate float64, users, rep int) StepResult {
	st := experiment.Step{ID: experiment.StepID(app, "nomad", "baseline", rate, users, rep), App: app, Orchestrator: "nomad", Variant: "baseline", OfferedRPS: rate, Users: users, Rep: rep}
	return StepResult{Labels: LabelsFor("s", st), Skipped: true, Outcome: OutcomeBroken,
		Reasons: []string{"broke below"}, Gates: []Gate{{Name: GateEarlyStop, Detail: "broke below"}}}
}

const oomKill = "web (instance 1a2b3c4d) OOM-killed at 12.0 s, not injected"

// An OOM kill in most repetitions breaks the level although latency,
// throughput and errors meet the SLO: early stop already stopped those
// repetitions there, and the breaking point must agree.
func TestTaskEventsBreakTheLevel(t *testing.T) {
	var steps []StepResult
	for rep := 1; rep <= 5; rep++ {
		steps = append(steps, sweptStep("taewa", 100, 0, rep, testSLO, 10, 3000, 0, ""))
		events := ""
		if rep <= 3 {
			events = oomKill
		}
		steps = append(steps, sweptStep("taewa", 200, 0, rep, testSLO, 20, 6000, 0, events))
	}
	if steps[3].Outcome != OutcomeBroken || steps[9].Outcome != OutcomeValid {
		t.Fatalf("the sweep's outcomes: %s, %s", steps[3].OutcomeText(), steps[9].OutcomeText())
	}
	levels := Summarize(steps, testSLO)
	r200 := levels[1]
	if !r200.Breaks() || strings.Join(r200.Rules, ",") != RuleGates {
		t.Fatalf("r200 rules %v details %q", r200.Rules, r200.Details)
	}
	want := "task-events broke 3 of 5 repetitions: " + oomKill + " (rep 1)"
	if r200.Details[0] != want {
		t.Errorf("detail %q, want %q", r200.Details[0], want)
	}
	bp := BreakingPoints(levels)[0]
	if !bp.Reached || bp.Level() != "r200" || bp.Rules[0] != RuleGates || bp.Details[0] != want || bp.LastGood.Level() != "r100" {
		t.Fatalf("breaking point %+v", bp)
	}

	// two OOM kills of five are a minority: the level holds
	for i := range steps {
		if steps[i].OfferedRPS == 200 && steps[i].Rep == 3 {
			steps[i] = sweptStep("taewa", 200, 0, 3, testSLO, 20, 6000, 0, "")
		}
	}
	if l := Summarize(steps, testSLO)[1]; l.Breaks() {
		t.Errorf("2 of 5 broke the level: %v %q", l.Rules, l.Details)
	}
}

// Repetitions that broke below count with the ones broken here: one OOM
// kill and two repetitions stopped at a lower level are three of five.
func TestSkippedRepetitionsCountWithGateBreaks(t *testing.T) {
	steps := []StepResult{
		sweptStep("taewa", 200, 0, 1, testSLO, 20, 6000, 0, oomKill),
		skippedStep("taewa", 200, 0, 2),
		skippedStep("taewa", 200, 0, 3),
		sweptStep("taewa", 200, 0, 4, testSLO, 20, 6000, 0, ""),
		sweptStep("taewa", 200, 0, 5, testSLO, 20, 6000, 0, ""),
	}
	// p99 is judged on the censored median: two infinite of five leave 20 ms
	l := Summarize(steps, experiment.SLO{MinAchievedRatio: 0.95, MaxErrorRatio: 0.01})[0]
	want := "task-events broke 1 of 5 repetitions: " + oomKill + " (rep 1); 2 of 5 broke at a lower level"
	if strings.Join(l.Rules, ",") != RuleGates || l.Details[len(l.Details)-1] != want {
		t.Fatalf("rules %v details %q, want %q", l.Rules, l.Details, want)
	}
}

// Closed loop under the default SLO has no p99 and no throughput rule: a
// level where every repetition broke below used to meet the SLO, and the
// breaking point came out "not reached" with a last good level at which
// nothing ran. Here each repetition broke at u4 for its own reason, none
// of which the level's pooled figures show.
func TestClosedLoopBreaksWhereEveryRepetitionBrokeBelow(t *testing.T) {
	steps := []StepResult{
		sweptStep("social-network", 0, 2, 1, defaultSLO, 30, 3000, 0, ""),
		sweptStep("social-network", 0, 2, 2, defaultSLO, 30, 3000, 0, ""),
		sweptStep("social-network", 0, 2, 3, defaultSLO, 30, 3000, 0, ""),
		// 2 % errors in a short repetition: broken by the step's SLO gate,
		// but 0.4 % pooled with the other two
		sweptStep("social-network", 0, 4, 1, defaultSLO, 60, 1000, 20, ""),
		sweptStep("social-network", 0, 4, 2, defaultSLO, 60, 2000, 0, oomKill),
		sweptStep("social-network", 0, 4, 3, defaultSLO, 60, 2000, 0, ""),
		skippedStep("social-network", 0, 8, 1),
		skippedStep("social-network", 0, 8, 2),
		skippedStep("social-network", 0, 8, 3),
	}
	if steps[3].Outcome != OutcomeBroken || steps[4].Outcome != OutcomeBroken || steps[5].Outcome != OutcomeValid {
		t.Fatalf("outcomes at u4: %s / %s / %s", steps[3].OutcomeText(), steps[4].OutcomeText(), steps[5].OutcomeText())
	}
	levels := Summarize(steps, defaultSLO)
	u4, u8 := levels[1], levels[2]
	if strings.Join(u4.Rules, ",") != RuleBrokenReps || u4.Details[0] != "2 of 3 repetitions broken (slo 1, task-events 1)" {
		t.Errorf("u4: rules %v details %q", u4.Rules, u4.Details)
	}
	if strings.Join(u8.Rules, ",") != RuleBrokenReps || u8.Details[0] != "all 3 repetitions broke at a lower level" {
		t.Errorf("u8: rules %v details %q", u8.Rules, u8.Details)
	}
	bp := BreakingPoints(levels)[0]
	if !bp.Reached || bp.Level() != "u4" || bp.LastGood == nil || bp.LastGood.Level() != "u2" {
		t.Fatalf("breaking point %+v", bp)
	}

	// Without the lower breaks in the archive (the top level alone), the
	// level still breaks rather than be the last good one.
	bp = BreakingPoints(Summarize(steps[6:], defaultSLO))[0]
	if !bp.Reached || bp.Level() != "u8" || bp.LastGood != nil {
		t.Fatalf("top level alone: %+v", bp)
	}
}
