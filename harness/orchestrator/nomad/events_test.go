package nomad

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

func TestAllocEventsTranslated(t *testing.T) {
	since := time.Unix(1000, 0)
	ns := func(s int64) int64 { return time.Unix(s, 0).UnixNano() }
	alloc := &api.Allocation{ID: "b2", TaskGroup: "ferretdb", CreateTime: ns(1001), PreviousAllocation: "a1", TaskStates: map[string]*api.TaskState{
		"ferretdb": {Events: []*api.TaskEvent{
			{Type: api.TaskStarted, Time: ns(999)}, // before the step
			{Type: api.TaskReceived, Time: ns(1001)},
			{Type: api.TaskStarted, Time: ns(1002)},
			{Type: api.TaskTerminated, Time: ns(1003), ExitCode: 137, Details: map[string]string{"oom_killed": "true"}},
			{Type: api.TaskTerminated, Time: ns(1004), ExitCode: 2},
			{Type: api.TaskRestartSignal, Time: ns(1005), RestartReason: "Template with change_mode restart re-rendered"},
			{Type: api.TaskNotRestarting, Time: ns(1006), DisplayMessage: "Exceeded allowed attempts 3 in interval 2m0s"},
		}},
	}}
	got := allocEvents(alloc, since)
	orchestrator.SortEvents(got)
	want := []orchestrator.TaskEventKind{orchestrator.EventPlaced, orchestrator.EventStarted, orchestrator.EventOOMKilled, orchestrator.EventExited, orchestrator.EventRestarted, orchestrator.EventFailed}
	if len(got) != len(want) {
		t.Fatalf("got %d events %v, want %v", len(got), got, want)
	}
	for i, e := range got {
		if e.Kind != want[i] || e.Group != "ferretdb" || e.Instance != "b2" {
			t.Errorf("event %d: %+v, want kind %s of ferretdb in b2", i, e, want[i])
		}
	}
	if got[0].Detail != "replaces allocation a1" || got[2].Detail != "exit code 137" || got[4].Detail != "Template with change_mode restart re-rendered" {
		t.Errorf("details: %q, %q, %q", got[0].Detail, got[2].Detail, got[4].Detail)
	}
}
