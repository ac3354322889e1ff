package results

import (
	"fmt"
	"strings"
)

// NodeHit is the machine a node-level fault acted on.
type NodeHit struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	Address string `json:"address"`
	// Chosen says why this node: named in the spec, runs an instance of the
	// service, holds a leadership.
	Chosen string `json:"chosen"`
}

// LeaderChange is one control plane's leader around a kill-leader fault.
type LeaderChange struct {
	ControlPlane string `json:"control_plane"`
	// Before and After are node names; After is empty when no leader was
	// seen before the step ended.
	Before string `json:"before"`
	After  string `json:"after,omitempty"`
	// AfterSeconds is when After was first seen, from the injection.
	AfterSeconds *float64 `json:"after_seconds,omitempty"`
}

// Changed reports whether another node leads now.
func (l LeaderChange) Changed() bool { return l.After != "" && l.After != l.Before }

// FaultWindow is the load's count of requests and errors in one part of
// the measured period: before the fault, while it lasted (until every
// instance was healthy again, or the end), after it.
type FaultWindow struct {
	Name        string  `json:"name"`
	FromSeconds float64 `json:"from_seconds"`
	ToSeconds   float64 `json:"to_seconds"`
	// Requests are those answered without error (the series' completed);
	// the failed are Errors, apart: all that ended in the window is their
	// sum.
	Requests int64 `json:"requests"`
	// Errors are socket errors and 4xx/5xx answers, as the load series
	// counts them (timeouts among them; the step's own counts split them).
	Errors int64 `json:"errors"`
}

// The names of a node fault's load windows.
const (
	WindowBefore = "before"
	WindowDuring = "during"
	WindowAfter  = "after"
)

// SchedulingProbe is a job submitted right after a kill-leader fault: it
// shows whether the cluster still schedules without that leader.
type SchedulingProbe struct {
	Job string `json:"job"`
	// AcceptedSeconds is when the submission was accepted, PlacedSeconds
	// when its instance ran, both from the injection; nil when it did not
	// happen before the step ended.
	AcceptedSeconds *float64 `json:"accepted_seconds,omitempty"`
	PlacedSeconds   *float64 `json:"placed_seconds,omitempty"`
	// Attempts counts the submissions refused before one was accepted.
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error,omitempty"`
}

// String reads "scheduling unavailable for 41.2 s: ..." when submissions
// were refused, "a job submitted after the fault placed 14.2 s after it
// (accepted after 10.9 s)" when the first one was taken, however long it
// took: the figures say, not a threshold.
func (s SchedulingProbe) String() string {
	switch {
	case s.PlacedSeconds == nil:
		why := ""
		if s.LastError != "" {
			why = " (" + s.LastError + ")"
		}
		return fmt.Sprintf("scheduling unavailable until the step ended: job %s not placed, %d submissions refused%s", s.Job, s.Attempts, why)
	case s.Attempts > 0:
		return fmt.Sprintf("scheduling unavailable for %.1f s: job %s placed only then, %d submissions refused before one was accepted after %.1f s", *s.PlacedSeconds, s.Job, s.Attempts, *s.AcceptedSeconds)
	default:
		return fmt.Sprintf("job %s, submitted after the fault, placed %.1f s after it (its first submission accepted after %.1f s)", s.Job, *s.PlacedSeconds, *s.AcceptedSeconds)
	}
}

// DatasetAfter is the app's dataset verification run after a fault's step:
// whether writes were lost.
type DatasetAfter struct {
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// NodeRecovery reads what a node-level fault's record says about recovery.
func (f FaultRecord) NodeRecovery() string {
	var parts []string
	if f.Node != nil {
		parts = append(parts, fmt.Sprintf("%s %s (%s, %s)", f.Kind, f.Node.Name, f.Node.Role, f.Node.Chosen))
	}
	switch {
	case f.AllHealthySeconds != nil:
		parts = append(parts, fmt.Sprintf("every instance healthy again on the remaining nodes after %.1f s", *f.AllHealthySeconds))
	case f.AllHealthyNote != "":
		parts = append(parts, "not recovered before the step ended: "+f.AllHealthyNote)
	}
	for _, l := range f.Leaders {
		switch {
		case l.Changed():
			parts = append(parts, fmt.Sprintf("%s leader %s → %s after %.1f s", l.ControlPlane, l.Before, l.After, *l.AfterSeconds))
		case l.After == "":
			parts = append(parts, fmt.Sprintf("%s: no leader after %s's loss before the step ended", l.ControlPlane, l.Before))
		case f.Node != nil && l.Before != f.Node.Name:
			parts = append(parts, fmt.Sprintf("%s leader stayed %s (not the node hit)", l.ControlPlane, l.Before))
		default:
			parts = append(parts, fmt.Sprintf("%s: no leader until %s came back and led again after %.1f s", l.ControlPlane, l.Before, *l.AfterSeconds))
		}
	}
	if f.Scheduling != nil {
		parts = append(parts, f.Scheduling.String())
	}
	if f.HarnessEndpoint != "" {
		parts = append(parts, "the harness's own "+f.HarnessEndpoint+" was on the node hit, so it lost that API too: the figures read through it are the harness's loss, not the cluster's")
	}
	if f.Dataset != nil && !f.Dataset.Passed {
		parts = append(parts, "dataset verification failed after the step: "+f.Dataset.Detail)
	}
	return strings.Join(parts, "; ")
}
