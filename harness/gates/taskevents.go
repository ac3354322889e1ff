package gates

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// TaskEvidence is what the task-events gate judges, gathered around the
// load: the orchestrator's events since it began, and the instances'
// fingerprint just before it and just after it.
type TaskEvidence struct {
	Events        []orchestrator.TaskEvent
	EventsErr     error
	Before, After Fingerprint
	BeforeErr     error
	AfterErr      error
	// LostEarlier are the instances earlier steps' node faults took down.
	// A revived node's agent reports their end late, into a later step:
	// seen as "taewa/taewa exited (exit code 255) at -0.0 s", which broke
	// the step after a kill-node.
	LostEarlier map[string]bool
	// ScaledGroup is the group an autoscaler sizes during a scaling step:
	// its instances placed, started and stopped are the autoscaler's doing
	// (the scaling gate holds it to its own actions), not failures.
	ScaledGroup string
}

// TaskVerdict is the task-events gate's verdict: the gate, every event
// with what caused it, and the injected fault's recovery, the seconds from
// the injection to the first start it caused (nil when none was seen).
type TaskVerdict struct {
	Gate     results.Gate
	Events   []results.StepEvent
	Recovery *float64
}

// TaskEventsGate decides the task-events gate. Whatever the events say,
// the fingerprints must be readable and show no instance gone, new or
// restarted that the injected fault does not explain: events can be lost
// or unreadable, the instances' restart counts cannot. A fingerprint that
// could not be read leaves the step unjudged (invalid); a change nobody
// injected is the application failing (broken).
func TaskEventsGate(step string, ev TaskEvidence, measuredFrom time.Time, fault *results.FaultRecord) TaskVerdict {
	var v TaskVerdict
	g := results.Gate{Name: TaskEvents}
	var unplanned []string
	if ev.EventsErr == nil {
		v.Events, v.Recovery, unplanned = attributeEvents(ev.Events, measuredFrom, fault, lateReports(ev), scaledBy(ev))
	}
	var fpErr string
	switch {
	case ev.BeforeErr != nil:
		fpErr = fmt.Sprintf("before the load: %v", ev.BeforeErr)
	case ev.AfterErr != nil:
		fpErr = fmt.Sprintf("after the load: %v", ev.AfterErr)
	case len(ev.Before) == 0:
		fpErr = "before the load: no running instance was listed"
	}
	if fpErr != "" {
		g.Detail = fmt.Sprintf("step %s: the instances could not be read %s, so whether one restarted or was replaced is unknown", step, fpErr)
		if len(unplanned) > 0 {
			g.Detail += "; the events show " + clipList(unplanned, 5)
		}
		v.Gate = g
		return v
	}
	var unexplained, explained, scaled []string
	for _, c := range fingerprintChanges(ev.Before, ev.After) {
		if explainedByFault(fault, c.Instance) {
			explained = append(explained, c.String())
		} else if ev.ScaledGroup != "" && c.Group == ev.ScaledGroup && c.addedOrRemoved() {
			scaled = append(scaled, c.String())
		} else {
			unexplained = append(unexplained, c.String())
		}
	}
	var problems []string
	if len(unplanned) > 0 {
		problems = append(problems, "events: "+clipList(unplanned, 5))
	}
	if len(unexplained) > 0 {
		problems = append(problems, "instances: "+clipList(unexplained, 5))
	}
	var notes []string
	if ev.EventsErr != nil {
		notes = append(notes, fmt.Sprintf("the task events could not be read (%v), so the instances alone judged", ev.EventsErr))
	}
	if len(problems) > 0 {
		g.Breaks = true
		g.Detail = strings.Join(append(problems, notes...), "; ")
		v.Gate = g
		return v
	}
	g.Passed = true
	switch {
	case ev.EventsErr != nil:
	case len(v.Events) > 0:
		late, byScaler := 0, 0
		for _, e := range v.Events {
			switch e.Cause {
			case results.CauseEarlierNodeFault:
				late++
			case results.CauseAutoscaler:
				byScaler++
			}
		}
		switch {
		case byScaler == len(v.Events):
			notes = append(notes, fmt.Sprintf("%d events, all of the autoscaler's instances coming and going", byScaler))
		case byScaler > 0:
			notes = append(notes, fmt.Sprintf("%d events: %d of the autoscaler's instances coming and going, %d of the injected fault or an earlier step's node fault", len(v.Events), byScaler, len(v.Events)-byScaler))
		case late == len(v.Events):
			notes = append(notes, fmt.Sprintf("%d events, all late reports of instances an earlier step's node fault took down", late))
		case late > 0:
			notes = append(notes, fmt.Sprintf("%d events: %d of the injected fault, %d late reports of instances an earlier step's node fault took down", len(v.Events), len(v.Events)-late, late))
		default:
			notes = append(notes, fmt.Sprintf("%d events, all of the injected fault", len(v.Events)))
		}
	default:
		notes = append(notes, "no task started, stopped or restarted during the load")
	}
	if len(scaled) > 0 {
		notes = append(notes, fmt.Sprintf("%d instances of the autoscaled group %s came or went", len(scaled), ev.ScaledGroup))
	}
	if len(explained) > 0 {
		notes = append(notes, "instance changes, all of the injected fault: "+clipList(explained, 5))
	} else if len(scaled) == 0 {
		notes = append(notes, fmt.Sprintf("the %d instances kept their IDs and restart counts", len(ev.Before)))
	}
	g.Detail = strings.Join(notes, "; ")
	v.Gate = g
	return v
}

// attributeEvents attributes each event to the injected fault or to
// nothing, finds the fault's recovery time, and lists the events nobody
// injected. An event is the fault's when it happened after the injection
// to the instance hit or to its group (the replacement of a stopped
// instance is a new one); an OOM kill never is, since no fault injects
// one. Events of other groups after a fault are not the fault's either: a
// cascade of restarts is something the application did, and is reported
// as such.
func attributeEvents(events []orchestrator.TaskEvent, measuredFrom time.Time, fault *results.FaultRecord, late, scaled func(orchestrator.TaskEvent) bool) (judged []results.StepEvent, recovery *float64, unplanned []string) {
	for _, e := range events {
		se := results.StepEvent{TaskEvent: e, Seconds: e.At.Sub(measuredFrom).Seconds(), Cause: results.CauseUnplanned}
		if late(e) {
			se.Cause = results.CauseEarlierNodeFault
		} else if scaled(e) {
			se.Cause = results.CauseAutoscaler
		} else if fault != nil && faultCauses(fault, e) {
			se.Cause = results.CauseInjected
			if e.Kind == orchestrator.EventStarted && recovery == nil {
				seconds := e.At.Sub(fault.At).Seconds()
				recovery = &seconds
			}
		}
		if se.Cause == results.CauseUnplanned {
			unplanned = append(unplanned, se.String())
		}
		judged = append(judged, se)
	}
	return judged, recovery, unplanned
}

// lateReports tells the late report of an instance an earlier node fault
// took down: an end (exited, stopped, failed) of an instance in
// LostEarlier that was not running when this step's load began. An
// instance that was, such as one a partition left in place, is judged as
// any other: its end is this step's.
func lateReports(ev TaskEvidence) func(orchestrator.TaskEvent) bool {
	running := map[string]bool{}
	for k := range ev.Before {
		running[k.ID] = true
	}
	return func(e orchestrator.TaskEvent) bool {
		if !ev.LostEarlier[e.Instance] || running[e.Instance] {
			return false
		}
		switch e.Kind {
		case orchestrator.EventExited, orchestrator.EventStopped, orchestrator.EventFailed:
			return true
		}
		return false
	}
}

// scaledBy tells the events of the autoscaled group's instances coming
// and going: placed, started, stopped, and the exit of one stopped. An
// OOM kill, a failure or a restart in place is never the autoscaler's.
func scaledBy(ev TaskEvidence) func(orchestrator.TaskEvent) bool {
	stopped := map[string]bool{}
	for _, e := range ev.Events {
		if e.Group == ev.ScaledGroup && e.Kind == orchestrator.EventStopped {
			stopped[e.Instance] = true
		}
	}
	return func(e orchestrator.TaskEvent) bool {
		if ev.ScaledGroup == "" || e.Group != ev.ScaledGroup {
			return false
		}
		switch e.Kind {
		case orchestrator.EventPlaced, orchestrator.EventStarted, orchestrator.EventStopped:
			return true
		case orchestrator.EventExited:
			return stopped[e.Instance]
		}
		return false
	}
}

// faultCauses reports whether the injected fault explains the event.
func faultCauses(f *results.FaultRecord, e orchestrator.TaskEvent) bool {
	// Kubernetes stamps events to the second
	if f.At.IsZero() || f.Error != "" || e.At.Before(f.At.Truncate(time.Second)) || e.Kind == orchestrator.EventOOMKilled {
		return false
	}
	return faultHit(f, e.Instance, e.Group)
}

// faultHit reports whether an instance is the one the fault hit or of its
// group (the replacement of a stopped instance is a new one).
func faultHit(f *results.FaultRecord, instance, group string) bool {
	if (f.Hit.Instance != "" && instance == f.Hit.Instance) || (f.Hit.Group != "" && group == f.Hit.Group) {
		return true
	}
	// a node fault hits every instance that ran on the node
	for _, h := range f.OnNode {
		if instance == h.Instance || group == h.Group {
			return true
		}
	}
	return false
}

// clipList joins the first n items and says how many more there were.
func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
}
