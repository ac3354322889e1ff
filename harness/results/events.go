package results

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// FaultRecord is what happened when a step injected a fault during load,
// archived as the step's metadata["fault"].
type FaultRecord struct {
	Kind    orchestrator.FaultKind `json:"kind"`
	Service string                 `json:"service"`
	At      time.Time              `json:"at"`
	// Seconds is the injection time from the start of the measured period.
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
	// Hit is the instance the fault acted on; its events are the fault's.
	Hit orchestrator.FaultHit `json:"hit"`
	// RecoverySeconds runs from the injection to the next start of a task
	// of the hit group (restarted in place or replaced); nil when none
	// started before the step ended.
	RecoverySeconds *float64 `json:"recovery_seconds,omitempty"`
}

// Recovery reads "restarted 3.6 s after the fault" or says it did not.
func (f FaultRecord) Recovery() string {
	switch {
	case f.Error != "":
		return "not injected: " + f.Error
	case f.RecoverySeconds == nil:
		return "no task of " + f.Hit.Group + " started again before the step ended"
	default:
		return fmt.Sprintf("%s started again %.1f s after the fault", f.Hit.Group, *f.RecoverySeconds)
	}
}

// Why a task event happened, as archived.
const (
	CauseInjected  = "injected fault"
	CauseUnplanned = "not injected"
)

// StepEvent is a task event during a step's load, archived in the step's
// metadata["task_events"].
type StepEvent struct {
	orchestrator.TaskEvent
	// Seconds is the time from the start of the measured period (negative
	// in the warm-up).
	Seconds float64 `json:"seconds"`
	Cause   string  `json:"cause"`
}

func (e StepEvent) String() string {
	return fmt.Sprintf("%s at %+.1f s", e.TaskEvent, e.Seconds)
}

// EventsOf returns the step's task events and injected fault, whether the
// step was made in this process or read back from the archive.
func EventsOf(r StepResult) ([]StepEvent, *FaultRecord) {
	var events []StepEvent
	var fault *FaultRecord
	decodeMeta(r.Metadata["task_events"], &events)
	if raw, ok := r.Metadata["fault"]; ok {
		fault = &FaultRecord{}
		if !decodeMeta(raw, fault) {
			fault = nil
		}
	}
	return events, fault
}

// decodeMeta fills out from a metadata value: the typed value itself in
// this process, a JSON tree once archived.
func decodeMeta(raw any, out any) bool {
	if raw == nil {
		return false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, out) == nil
}
