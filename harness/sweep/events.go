package sweep

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// GateTaskEvents fails when a task restarted, exited, was OOM-killed or
// replaced during the load and the step did not inject it: the application
// ran on fewer instances than declared for part of the step, so the step is
// broken, with what happened and when as its reason.
const GateTaskEvents = "task-events"

// collectEvents lists the task events of every job of the deployment since
// the load began.
func collectEvents(ctx context.Context, dep *deployment, since time.Time) ([]orchestrator.TaskEvent, error) {
	var all []orchestrator.TaskEvent
	for _, d := range dep.jobs {
		events, err := dep.orch.TaskEvents(ctx, d, since)
		if err != nil {
			return nil, err
		}
		all = append(all, events...)
	}
	orchestrator.SortEvents(all)
	return all, nil
}

// judgeEvents attributes each event to the injected fault or to nothing,
// fills in the fault's recovery time, and decides the gate. An event is the
// fault's when it happened after the injection to the instance hit or to
// its group (the replacement of a stopped instance is a new one); an OOM
// kill never is, since no fault injects one. Events of other groups after
// a fault are not the fault's either: a cascade of restarts is something
// the application did, and is reported as such.
func judgeEvents(events []orchestrator.TaskEvent, measuredFrom time.Time, fault *results.FaultRecord) ([]results.StepEvent, results.Gate) {
	var out []results.StepEvent
	var unplanned []string
	for _, e := range events {
		se := results.StepEvent{TaskEvent: e, Seconds: e.At.Sub(measuredFrom).Seconds(), Cause: results.CauseUnplanned}
		if fault != nil && faultCauses(fault, e) {
			se.Cause = results.CauseInjected
			if e.Kind == orchestrator.EventStarted && fault.RecoverySeconds == nil {
				recovery := e.At.Sub(fault.At).Seconds()
				fault.RecoverySeconds = &recovery
			}
		}
		if se.Cause == results.CauseUnplanned {
			unplanned = append(unplanned, se.String())
		}
		out = append(out, se)
	}
	switch {
	case len(unplanned) > 0:
		return out, results.Gate{Name: GateTaskEvents, Breaks: true, Detail: clipList(unplanned, 5)}
	case len(out) > 0:
		return out, results.Gate{Name: GateTaskEvents, Passed: true, Detail: fmt.Sprintf("%d events, all of the injected fault", len(out))}
	default:
		return out, results.Gate{Name: GateTaskEvents, Passed: true, Detail: "no task started, stopped or restarted during the load"}
	}
}

// causes reports whether the injected fault explains the event.
func faultCauses(f *results.FaultRecord, e orchestrator.TaskEvent) bool {
	// Kubernetes stamps events to the second
	if f.At.IsZero() || f.Error != "" || e.At.Before(f.At.Truncate(time.Second)) || e.Kind == orchestrator.EventOOMKilled {
		return false
	}
	return (f.Hit.Instance != "" && e.Instance == f.Hit.Instance) || (f.Hit.Group != "" && e.Group == f.Hit.Group)
}

// clipList joins the first n items and says how many more there were.
func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
}
