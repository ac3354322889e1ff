package swarm

import (
	"testing"

	"github.com/moby/moby/api/types/events"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

func TestContainerEventsTranslated(t *testing.T) {
	attrs := map[string]string{LabelGroup: "redis", LabelTask: "redis", "com.docker.swarm.task.id": "t1", "exitCode": "137", "signal": "9"}
	cases := []struct {
		action events.Action
		kind   orchestrator.TaskEventKind
		detail string
		keep   bool
	}{
		{events.ActionStart, orchestrator.EventStarted, "", true},
		{events.ActionOOM, orchestrator.EventOOMKilled, "", true},
		{events.ActionDie, orchestrator.EventExited, "exit code 137", true},
		{events.ActionKill, orchestrator.EventStopped, "signal 9", true},
		{events.ActionCreate, "", "", false},
	}
	for _, c := range cases {
		e, ok := containerEvent(events.Message{Action: c.action, Actor: events.Actor{ID: "c1", Attributes: attrs}, TimeNano: 5})
		if ok != c.keep {
			t.Errorf("%s: kept %v, want %v", c.action, ok, c.keep)
			continue
		}
		if ok && (e.Kind != c.kind || e.Detail != c.detail || e.Group != "redis" || e.Instance != "t1") {
			t.Errorf("%s: %+v, want %s %q of redis task t1", c.action, e, c.kind, c.detail)
		}
	}
}
