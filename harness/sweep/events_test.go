package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

func TestTaskEventsJudged(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	ev := func(s float64, kind orchestrator.TaskEventKind, group, instance string) orchestrator.TaskEvent {
		return orchestrator.TaskEvent{At: at(s), Kind: kind, Group: group, Task: group, Instance: instance}
	}
	killed := func() *results.FaultRecord {
		return &results.FaultRecord{Kind: orchestrator.FaultKillTask, Service: "sn-redis", At: at(10), Hit: orchestrator.FaultHit{Instance: "a1", Group: "redis"}}
	}

	t.Run("no events pass", func(t *testing.T) {
		_, g := judgeEvents(nil, start, nil)
		if !g.Passed || g.Breaks {
			t.Fatalf("gate %+v, want passed", g)
		}
	})
	t.Run("an OOM kill nobody injected breaks the step, named and timed", func(t *testing.T) {
		events := []orchestrator.TaskEvent{ev(12.3, orchestrator.EventOOMKilled, "ferretdb", "f1"), ev(15.4, orchestrator.EventStarted, "ferretdb", "f1")}
		judged, g := judgeEvents(events, start, nil)
		if g.Passed || !g.Breaks {
			t.Fatalf("gate %+v, want a failed gate that breaks the step", g)
		}
		if !strings.Contains(g.Detail, "ferretdb/ferretdb oom-killed at +12.3 s") || !strings.Contains(g.Detail, "started at +15.4 s") {
			t.Errorf("detail %q does not say what happened when", g.Detail)
		}
		if len(judged) != 2 || judged[0].Cause != results.CauseUnplanned {
			t.Errorf("judged %+v", judged)
		}
	})
	t.Run("the injected fault's events pass and give its recovery", func(t *testing.T) {
		f := killed()
		events := []orchestrator.TaskEvent{ev(10.1, orchestrator.EventExited, "redis", "a1"), ev(13.6, orchestrator.EventStarted, "redis", "a1")}
		judged, g := judgeEvents(events, start, f)
		if !g.Passed {
			t.Fatalf("gate %+v, want passed", g)
		}
		for _, j := range judged {
			if j.Cause != results.CauseInjected {
				t.Errorf("%s: cause %q, want the injected fault", j.TaskEvent, j.Cause)
			}
		}
		if f.RecoverySeconds == nil || *f.RecoverySeconds < 3.59 || *f.RecoverySeconds > 3.61 {
			t.Errorf("recovery %v, want 3.6 s", f.RecoverySeconds)
		}
	})
	t.Run("a replacement in the hit group is the fault's", func(t *testing.T) {
		f := killed()
		f.Kind = orchestrator.FaultReplaceInstance
		events := []orchestrator.TaskEvent{ev(10.2, orchestrator.EventStopped, "redis", "a1"), ev(11, orchestrator.EventPlaced, "redis", "b2"), ev(12, orchestrator.EventStarted, "redis", "b2")}
		if _, g := judgeEvents(events, start, f); !g.Passed {
			t.Fatalf("gate %+v, want passed", g)
		}
	})
	t.Run("before the fault, in another group, or an OOM after it, is not the fault's", func(t *testing.T) {
		for _, e := range []orchestrator.TaskEvent{
			ev(9, orchestrator.EventExited, "redis", "a1"),
			ev(11, orchestrator.EventRestarted, "user", "u1"),
			ev(11, orchestrator.EventOOMKilled, "redis", "a1"),
		} {
			if _, g := judgeEvents([]orchestrator.TaskEvent{e}, start, killed()); g.Passed || !g.Breaks {
				t.Errorf("%s at %s: gate %+v, want broken", e, e.At.Sub(start), g)
			}
		}
	})
	t.Run("a fault that failed explains nothing", func(t *testing.T) {
		f := killed()
		f.Error = "no running task"
		if _, g := judgeEvents([]orchestrator.TaskEvent{ev(11, orchestrator.EventExited, "redis", "a1")}, start, f); g.Passed {
			t.Errorf("gate %+v, want broken", g)
		}
	})
	t.Run("a long list is clipped", func(t *testing.T) {
		var events []orchestrator.TaskEvent
		for i := range 8 {
			events = append(events, ev(float64(i), orchestrator.EventRestarted, "user", "u1"))
		}
		if _, g := judgeEvents(events, start, nil); !strings.HasSuffix(g.Detail, "and 3 more") {
			t.Errorf("detail %q", g.Detail)
		}
	})
}
