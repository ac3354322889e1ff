package nomad

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// TaskEvents reads the task events of every allocation of the job, old
// ones included: a replaced allocation's last events (its kill, its OOM)
// are what explains the new one.
func (a *Orchestrator) TaskEvents(ctx context.Context, d *orchestrator.Deployment, since time.Time) ([]orchestrator.TaskEvent, error) {
	stubs, _, err := a.Client.Jobs().Allocations(d.Job, true, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: allocations of %s: %w", d.Job, err)
	}
	var out []orchestrator.TaskEvent
	for _, s := range stubs {
		if s.ModifyTime < since.UnixNano() {
			continue // nothing about it changed since
		}
		alloc, _, err := a.Client.Allocations().Info(s.ID, qo(ctx))
		if err != nil {
			return nil, fmt.Errorf("nomad: allocation %s: %w", orchestrator.ShortID(s.ID), err)
		}
		out = append(out, allocEvents(alloc, since)...)
	}
	orchestrator.SortEvents(out)
	return out, nil
}

// allocEvents translates one allocation's history from since on.
func allocEvents(alloc *api.Allocation, since time.Time) []orchestrator.TaskEvent {
	var out []orchestrator.TaskEvent
	if created := time.Unix(0, alloc.CreateTime); !created.Before(since) {
		detail := "new allocation"
		if alloc.PreviousAllocation != "" {
			detail = "replaces allocation " + orchestrator.ShortID(alloc.PreviousAllocation)
		}
		out = append(out, orchestrator.TaskEvent{At: created, Kind: orchestrator.EventPlaced, Group: alloc.TaskGroup, Instance: alloc.ID, Detail: detail})
	}
	for task, state := range alloc.TaskStates {
		if state == nil {
			continue
		}
		for _, e := range state.Events {
			if e == nil || time.Unix(0, e.Time).Before(since) {
				continue
			}
			at := time.Unix(0, e.Time)
			kind, detail, ok := taskEventKind(e)
			if !ok {
				continue
			}
			out = append(out, orchestrator.TaskEvent{At: at, Kind: kind, Group: alloc.TaskGroup, Task: task, Instance: alloc.ID, Detail: detail})
		}
	}
	return out
}

// taskEventKind maps Nomad's event types; those that change nothing about
// a running task (received, setup, template rendered, downloads) are left out.
func taskEventKind(e *api.TaskEvent) (orchestrator.TaskEventKind, string, bool) {
	message := firstNonEmpty(e.DisplayMessage, e.Message)
	switch e.Type {
	case api.TaskStarted:
		return orchestrator.EventStarted, "", true
	case api.TaskTerminated:
		detail := fmt.Sprintf("exit code %d", e.ExitCode)
		if e.Signal != 0 {
			detail += fmt.Sprintf(", signal %d", e.Signal)
		}
		if e.Details["oom_killed"] == "true" || strings.Contains(strings.ToLower(message), "oom") {
			return orchestrator.EventOOMKilled, detail, true
		}
		return orchestrator.EventExited, detail, true
	case api.TaskRestartSignal:
		return orchestrator.EventRestarted, firstNonEmpty(e.RestartReason, message), true
	case api.TaskKilled:
		return orchestrator.EventStopped, message, true
	case api.TaskNotRestarting, api.TaskDriverFailure, "Setup Failure", "Failed Validation", "Sibling Task Failed":
		return orchestrator.EventFailed, message, true
	}
	return "", "", false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
