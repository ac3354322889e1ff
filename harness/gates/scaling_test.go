package gates

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

var scalingSLO = experiment.SLO{P99Ms: 250, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}

// scaleOut is a well-behaved scaling step: one instance for 30 s at 40 a
// second, a step up to 400, the autoscaler deciding at 40 s, the second
// instance running at 44 s and serving at 47 s, the p99 above the SLO from
// 30 s to 49 s, then within it.
func scaleOut(t0 time.Time) ScalingEvidence {
	ev := ScalingEvidence{Scaler: "test scaler", Policy: contract.Autoscale{Group: "web", Min: 1, Max: 4, TargetCPU: 0.7},
		Settle: 60 * time.Second, StepUp: 30 * time.Second, Start: t0,
		Metric: orchestrator.MetricSamples{Source: "vm", Query: "q", Count: 90, Last: 60, Max: 100}}
	for s := 0; s < 90; s++ {
		st := orchestrator.ScaleState{At: t0.Add(time.Duration(s) * time.Second), Desired: 1, Running: 1, Serving: 1}
		if s >= 40 {
			st.Desired = 2
		}
		if s >= 44 {
			st.Running = 2
		}
		if s >= 47 {
			st.Serving = 2
		}
		ev.States = append(ev.States, st)
		sec := results.Second{T: float64(s), Offered: 40, Achieved: 40, P99Ms: 20}
		if s >= 30 {
			sec.Offered, sec.Achieved = 400, 400
		}
		if s >= 30 && s < 49 {
			sec.P99Ms, sec.Achieved, sec.Errors = 900, 300, 2
		}
		ev.Series = append(ev.Series, sec)
	}
	ev.Events = []orchestrator.ScaleEvent{{At: t0.Add(40 * time.Second), From: 1, To: 2, By: orchestrator.ScaledByAutoscaler, Reason: "scaling up because factor is 1.4"}}
	return ev
}

func TestScalingRecordTimesTheScaleOutAndTheRecovery(t *testing.T) {
	rec := ScalingRecordOf(scaleOut(time.Unix(1000, 0)), scalingSLO)
	want := func(name string, got *float64, w float64) {
		t.Helper()
		if got == nil || *got != w {
			t.Errorf("%s = %v, want %g", name, got, w)
		}
	}
	want("first decision", rec.FirstDecisionSeconds, 10)
	want("scale-out", rec.ScaleOutSeconds, 17)
	want("recovery", rec.RecoverySeconds, 19)
	want("new instance running", rec.Events[0].RunningSeconds, 4)
	want("new instance serving", rec.Events[0].ServingSeconds, 7)
	if rec.StartCount != 1 || rec.PeakCount != 2 || rec.FinalCount != 2 {
		t.Errorf("counts start %d peak %d final %d, want 1 2 2", rec.StartCount, rec.PeakCount, rec.FinalCount)
	}
	if rec.ErrorsWhileScaling != 38 || rec.RequestsWhileScaling != 19*302 {
		t.Errorf("while scaling %d errors of %d requests, want 38 of %d", rec.ErrorsWhileScaling, rec.RequestsWhileScaling, 19*302)
	}
	if g := ScalingGate(scaleOut(time.Unix(1000, 0)), rec); !g.Passed {
		t.Fatalf("a well-behaved scaling step: %+v", g)
	}
	if g := ScalingSLOGate(rec, scalingSLO); !g.Passed || !strings.Contains(g.Detail, "19 s after the step up") {
		t.Fatalf("recovered in 19 s of a 60 s settle: %+v", g)
	}
}

// Every way a scaling step can fail to measure its autoscaler makes it
// invalid, naming what went wrong.
func TestScalingGateFailsWhenTheStepDidNotMeasureTheAutoscaler(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for name, c := range map[string]struct {
		spoil func(*ScalingEvidence)
		want  string
	}{
		"metric source off": {func(ev *ScalingEvidence) { ev.Metric.Count = 0 }, "held no sample of its metric"},
		"metric unreadable": {func(ev *ScalingEvidence) { ev.MetricErr = errors.New("connection refused") }, "could not be read: connection refused"},
		"scaled by an operator": {func(ev *ScalingEvidence) {
			ev.Events = append(ev.Events, orchestrator.ScaleEvent{At: t0.Add(60 * time.Second), From: 2, To: 3, By: orchestrator.ScaledByOther, Reason: "nomad job scale"})
			for i := 60; i < len(ev.States); i++ {
				ev.States[i].Desired = 3
			}
		}, "by something other than the autoscaler (nomad job scale)"},
		"scaled with no event": {func(ev *ScalingEvidence) {
			for i := 70; i < len(ev.States); i++ {
				ev.States[i].Desired = 4
			}
		}, "went from 2 to 4 between 69 s and 70 s with no scaling event"},
		"started above min": {func(ev *ScalingEvidence) {
			for i := range ev.States {
				ev.States[i].Desired++
			}
			ev.Events[0].To++
		}, "began with 2 instances desired, not the policy's min 1"},
		"count never read": {func(ev *ScalingEvidence) {
			ev.States, ev.SampleErrors, ev.SampleErr = nil, 90, errors.New("nomad: 503")
		}, "never read (nomad: 503)"},
		"events unreadable": {func(ev *ScalingEvidence) { ev.EventsErr = errors.New("timeout") }, "scaling events could not be read"},
	} {
		t.Run(name, func(t *testing.T) {
			ev := scaleOut(t0)
			c.spoil(&ev)
			g := ScalingGate(ev, ScalingRecordOf(ev, scalingSLO))
			if g.Passed || g.Breaks || !strings.Contains(g.Detail, c.want) {
				t.Fatalf("gate %+v, want invalid (not passed, not broken) with %q", g, c.want)
			}
		})
	}
}

func TestScalingSLOGateBreaksWhenTheSLONeverComesBack(t *testing.T) {
	never := scaleOut(time.Unix(1000, 0))
	for i := 30; i < len(never.Series); i++ {
		never.Series[i].Errors = 50
	}
	rec := ScalingRecordOf(never, scalingSLO)
	g := ScalingSLOGate(rec, scalingSLO)
	if g.Passed || !g.Breaks || !strings.Contains(g.Detail, "did not hold again") {
		t.Fatalf("errors to the end: %+v, want broken", g)
	}
	slow := scaleOut(time.Unix(1000, 0))
	for i := 60; i < len(slow.Series); i++ {
		slow.Series[i].Achieved = 300
	}
	g = ScalingSLOGate(ScalingRecordOf(slow, scalingSLO), scalingSLO)
	if g.Passed || !g.Breaks || !strings.Contains(g.Detail, "of the offered rate was achieved, below 0.95") {
		t.Fatalf("a quarter of the rate lost after the recovery: %+v, want broken", g)
	}
	// one second short and the next one over is the same throughput
	blip := scaleOut(time.Unix(1000, 0))
	blip.Series[70].Achieved, blip.Series[71].Achieved = 360, 440
	if g := ScalingSLOGate(ScalingRecordOf(blip, scalingSLO), scalingSLO); !g.Passed || !strings.Contains(g.Detail, "19 s after") {
		t.Fatalf("answers due in one second completed in the next: %+v, want passed at 19 s", g)
	}
	late := scaleOut(time.Unix(1000, 0))
	late.Settle = 10 * time.Second
	g = ScalingSLOGate(ScalingRecordOf(late, scalingSLO), scalingSLO)
	if g.Passed || !g.Breaks || !strings.Contains(g.Detail, "19 s after the step up, later than the settle time of 10 s") {
		t.Fatalf("recovery after settle: %+v, want broken", g)
	}
}
