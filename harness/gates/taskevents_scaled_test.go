package gates

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// During a scaling step the autoscaled group's instances come and go by
// design; the same group failing, and any other group changing, still
// break the step.
func TestTaskEventsExcuseTheAutoscaledGroupOnly(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ev := func(s float64, kind orchestrator.TaskEventKind, group, instance string) orchestrator.TaskEvent {
		return orchestrator.TaskEvent{At: start.Add(time.Duration(s * float64(time.Second))), Kind: kind, Group: group, Task: group, Instance: instance}
	}
	entry := orchestrator.Instance{ID: "e1", Group: "entry", Task: "entry"}
	web1 := orchestrator.Instance{ID: "w1", Group: "web", Task: "web"}
	web2 := orchestrator.Instance{ID: "w2", Group: "web", Task: "web"}
	before := Fingerprint{{"e1", "entry"}: entry, {"w1", "web"}: web1}
	after := Fingerprint{{"e1", "entry"}: entry, {"w2", "web"}: web2}
	scaled := []orchestrator.TaskEvent{
		ev(20, orchestrator.EventPlaced, "web", "w2"), ev(22, orchestrator.EventStarted, "web", "w2"),
		ev(60, orchestrator.EventStopped, "web", "w1"), ev(61, orchestrator.EventExited, "web", "w1"),
	}
	v := TaskEventsGate("s", TaskEvidence{Events: scaled, Before: before, After: after, ScaledGroup: "web"}, start, nil)
	if !v.Gate.Passed || !strings.Contains(v.Gate.Detail, "2 instances of the autoscaled group web came or went") {
		t.Fatalf("scale-out then scale-in: gate %+v, want passed", v.Gate)
	}
	for _, e := range v.Events {
		if e.Cause != results.CauseAutoscaler {
			t.Errorf("event %s: cause %q, want the autoscaler", e, e.Cause)
		}
	}
	for name, c := range map[string]struct {
		events      []orchestrator.TaskEvent
		after       Fingerprint
		scaledGroup string
	}{
		"no scaling declared":             {scaled, after, ""},
		"an OOM kill in the scaled group": {append(scaled, ev(70, orchestrator.EventOOMKilled, "web", "w2")), after, "web"},
		"an exit nobody stopped":          {[]orchestrator.TaskEvent{ev(30, orchestrator.EventExited, "web", "w1")}, Fingerprint{{"e1", "entry"}: entry}, "web"},
		"the entry replaced":              {scaled, Fingerprint{{"e9", "entry"}: {ID: "e9", Group: "entry", Task: "entry"}, {"w2", "web"}: web2}, "web"},
		"a restart in place":              {nil, Fingerprint{{"e1", "entry"}: entry, {"w1", "web"}: {ID: "w1", Group: "web", Task: "web", Restarts: 1}}, "web"},
	} {
		t.Run(name, func(t *testing.T) {
			v := TaskEventsGate("s", TaskEvidence{Events: c.events, Before: before, After: c.after, ScaledGroup: c.scaledGroup}, start, nil)
			if v.Gate.Passed || !v.Gate.Breaks {
				t.Fatalf("gate %+v, want broken", v.Gate)
			}
		})
	}
}
