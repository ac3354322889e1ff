package gates

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// Every check of the load run, made to fail on a deliberately wrong result
// and to pass on a right one. The integration tests make the same checks
// fail on a real cluster (test/integration/validity_test.go).

func TestGeneratorGate(t *testing.T) {
	bound := GeneratorLagBound(0, experiment.SLO{})
	res := &loadgen.Result{Generator: loadgen.GeneratorStats{LagSamples: 1000, LagP99Us: 300, LagMaxUs: 2000, CPUCores: 0.3}}
	if g := GeneratorGate(res, bound); !g.Passed || !strings.Contains(g.Detail, "(bound 5ms: the default; the SLO has no p99 rule)") {
		t.Fatalf("a generator on time refused: %+v", g)
	}
	res.Generator.LagP99Us = 48_000
	g := GeneratorGate(res, bound)
	if g.Passed || g.Breaks || !strings.Contains(g.Detail, "generator saturated: send lag p99 48ms") {
		t.Fatalf("a saturated generator passed: %+v", g)
	}
	if g := GeneratorGate(&loadgen.Result{}, bound); !g.NotChecked {
		t.Fatalf("nothing sent: %+v", g)
	}
	// 20 sends at 5 rps: their p99 is their maximum, one hiccup
	few := &loadgen.Result{Generator: loadgen.GeneratorStats{LagSamples: 20, LagP99Us: 11_000, LagMaxUs: 11_000}}
	if g := GeneratorGate(few, bound); g.Passed || !g.NotChecked || !strings.Contains(g.Detail, "20 sends") {
		t.Fatalf("too few sends for a p99: %+v", g)
	}
}

// A 3 ms send lag is nothing beside a 200 ms SLO and a third of a 10 ms one.
func TestGeneratorLagBoundFollowsTheSLO(t *testing.T) {
	res := &loadgen.Result{Generator: loadgen.GeneratorStats{LagSamples: 1000, LagP99Us: 3000, LagMaxUs: 4000}}
	if g := GeneratorGate(res, GeneratorLagBound(0, experiment.SLO{P99Ms: 200})); !g.Passed ||
		!strings.Contains(g.Detail, "(bound 5ms: the default, under 10 % of the SLO's p99 of 200 ms)") {
		t.Fatalf("a lag well under a 200 ms SLO refused: %+v", g)
	}
	g := GeneratorGate(res, GeneratorLagBound(0, experiment.SLO{P99Ms: 10}))
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, "generator saturated: send lag p99 3ms, max 4ms over 1000 sends") ||
		!strings.Contains(g.Detail, "(bound 1ms: 10 % of the SLO's p99 of 10 ms)") {
		t.Fatalf("a 3 ms lag under a 10 ms SLO passed: %+v", g)
	}
	// the spec's own bound wins over both
	if b := GeneratorLagBound(20*time.Millisecond, experiment.SLO{P99Ms: 10}); b.Max != 20*time.Millisecond || b.Source != "max_generator_lag in the spec" {
		t.Fatalf("declared bound = %+v", b)
	}
}

func TestCompleteGate(t *testing.T) {
	whole := func() *loadgen.Result {
		return &loadgen.Result{DurationSeconds: 10, WallSeconds: 10.2,
			Accounting: loadgen.Accounting{Due: 100, Completed: 90, Errors: 4, HTTPErrors: 3, SocketErrors: 1, Timeouts: 2, Unsent: 4}}
	}
	if g := CompleteGate(whole(), nil, 10*time.Second, "nomad"); !g.Passed || !strings.Contains(g.Detail, "100 due = 90 completed") {
		t.Fatalf("a whole run refused: %+v", g)
	}
	for name, c := range map[string]struct {
		res  *loadgen.Result
		err  error
		want string
	}{
		"exit status":  {whole(), errors.New("load job x (alloc 1234) task load exited 137 (signal 9)"), "exited 137"},
		"no result":    {nil, nil, "left no result"},
		"interrupted":  {func() *loadgen.Result { r := whole(); r.Interrupted, r.WallSeconds = true, 4; return r }(), nil, "interrupted after 4.0 s of 10.0 s"},
		"short window": {func() *loadgen.Result { r := whole(); r.DurationSeconds = 6; return r }(), nil, "measured 6.0 s of the planned 10.0 s"},
		"unaccounted":  {func() *loadgen.Result { r := whole(); r.Accounting.Due = 120; return r }(), nil, "120 due != 90 completed"},
	} {
		g := CompleteGate(c.res, c.err, 10*time.Second, "nomad")
		if g.Passed || g.Breaks || !strings.Contains(g.Detail, c.want) {
			t.Errorf("%s: %+v, want a failure naming %q", name, g, c.want)
		}
	}
}

func TestSLOGateBreaksNotInvalidates(t *testing.T) {
	slo := experiment.SLO{P99Ms: 100, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}
	ok := results.StepResult{Labels: results.Labels{OfferedRPS: 100}, DueRPS: 100, AchievedRPS: 99, Requests: 1000, Errors: 5, Corrected: results.Latency{P99: 20}}
	if g := SLOGate(ok, slo); !g.Passed {
		t.Fatalf("%+v", g)
	}
	// 5 % of answers were 503: the application failed, a measurement
	errs := ok
	errs.Errors = 50
	g := SLOGate(errs, slo)
	if g.Passed || !g.Breaks || !strings.Contains(g.Detail, "error ratio 0.0500 > 0.01") {
		t.Fatalf("503s: %+v", g)
	}
	sr := results.StepResult{Gates: []results.Gate{{Name: Healthy, Passed: true}, g}}
	sr.Decide()
	if sr.Outcome != results.OutcomeBroken {
		t.Fatalf("a step with 5 %% errors is %s, want broken", sr.Outcome)
	}
}

func TestLittleGate(t *testing.T) {
	// 8 connections at 10 ms carry 800 rps
	g := LittleGate(LittleCheckOf(8, 500, 10*time.Millisecond))
	if g.Name != Little || !g.Passed || !strings.Contains(g.Detail, "8 connections at the unloaded latency of 10.0 ms carry up to 800 rps, at least the 500 offered") {
		t.Fatalf("%+v", g)
	}
	// too few connections: the generator's queue, not the application, is
	// measured, so the step is invalid (no Breaks), not broken
	g = LittleGate(LittleCheckOf(8, 1000, 10*time.Millisecond))
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, "8 connections at the unloaded latency of 10.0 ms carry at most 800 rps, less than the 1000 offered") {
		t.Fatalf("%+v", g)
	}
	sr := results.StepResult{Gates: []results.Gate{g}}
	if sr.Decide(); sr.Outcome != results.OutcomeInvalid {
		t.Fatalf("a step short of connections is %s, want invalid", sr.Outcome)
	}
	if g := LittleGate(LittleCheckOf(8, 1000, 0)); g.Passed || !g.NotChecked || !strings.Contains(g.Detail, "no unloaded latency") {
		t.Fatalf("no latency known, no verdict: %+v", g)
	}
	if g := ClosedLittleGate(5); g.Passed || !g.NotChecked || !strings.Contains(g.Detail, "closed loop: each of the 5 users waits") {
		t.Fatalf("closed loop: %+v", g)
	}
}
