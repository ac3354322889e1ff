package orchestrator

import (
	"fmt"
	"sort"
	"time"
)

// TaskEventKind is what happened to a task, in words common to every
// orchestrator: the sweep judges a step by these, not by one orchestrator's
// vocabulary.
type TaskEventKind string

const (
	// EventStarted: a task's process started (first start, restart in
	// place, or the start of a replacement instance).
	EventStarted TaskEventKind = "started"
	// EventExited: a task's process ended on its own or by a signal.
	EventExited TaskEventKind = "exited"
	// EventOOMKilled: the kernel killed a task at its memory limit.
	EventOOMKilled TaskEventKind = "oom-killed"
	// EventRestarted: the orchestrator restarted a task in place on purpose
	// (Nomad's template change_mode, a failed liveness check).
	EventRestarted TaskEventKind = "restarted"
	// EventStopped: the orchestrator stopped a task (an instance removed,
	// rescheduled or replaced).
	EventStopped TaskEventKind = "stopped"
	// EventPlaced: a new instance was placed (a rescheduled allocation, a
	// replacement pod or Swarm task).
	EventPlaced TaskEventKind = "placed"
	// EventFailed: the orchestrator gave up on a task or could not start it.
	EventFailed TaskEventKind = "failed"
)

// TaskEvent is one thing the orchestrator reports about a task of a
// deployment. Only EventStarted and EventPlaced are not disruptions in
// themselves: they are how an instance comes back.
type TaskEvent struct {
	At       time.Time     `json:"at"`
	Kind     TaskEventKind `json:"kind"`
	Group    string        `json:"group"`
	Task     string        `json:"task"`
	Instance string        `json:"instance"`
	// Detail is the orchestrator's own account: exit code, signal, reason.
	Detail string `json:"detail,omitempty"`
}

// Disruptive reports whether the event interrupted a running task.
func (e TaskEvent) Disruptive() bool {
	return e.Kind != EventStarted && e.Kind != EventPlaced
}

// String reads "ferretdb/ferretdb oom-killed (exit code 137)".
func (e TaskEvent) String() string {
	who := e.Group + "/" + e.Task
	if e.Group == "" {
		// a deleted pod's last event names only the pod
		who = "instance " + ShortID(e.Instance)
	}
	s := fmt.Sprintf("%s %s", who, e.Kind)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// SortEvents orders events by time, then by instance, so that a step's
// record reads as it happened.
func SortEvents(events []TaskEvent) {
	sort.SliceStable(events, func(i, j int) bool {
		if !events[i].At.Equal(events[j].At) {
			return events[i].At.Before(events[j].At)
		}
		return events[i].Instance < events[j].Instance
	})
}

// FaultHit is the instance a fault acted on, so that the events it causes
// are told apart from those nobody injected.
type FaultHit struct {
	Instance string `json:"instance"`
	Group    string `json:"group"`
}
