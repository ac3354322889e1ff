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

	// The node-level kinds' (nodefault.go): the node hit, the control
	// planes' leaders around a kill-leader, the load's errors before,
	// during and after the fault, and recovery: AllHealthySeconds is when
	// every instance of the deployment ran healthy again on the nodes still
	// up, AllHealthyNote why it did not before the step ended.
	Node *NodeHit `json:"node,omitempty"`
	// OnNode are the instances that ran on the node hit: their events and
	// their groups' replacements are the fault's.
	OnNode            []orchestrator.FaultHit `json:"on_node,omitempty"`
	Leaders           []LeaderChange          `json:"leaders,omitempty"`
	Windows           []FaultWindow           `json:"windows,omitempty"`
	AllHealthySeconds *float64                `json:"all_healthy_seconds,omitempty"`
	AllHealthyNote    string                  `json:"all_healthy_note,omitempty"`
	Scheduling        *SchedulingProbe        `json:"scheduling,omitempty"`
	Dataset           *DatasetAfter           `json:"dataset_after,omitempty"`
	// RestoredSeconds is when the node was started again or its traffic
	// let through, from the injection; RestoreError why it was not.
	RestoredSeconds *float64 `json:"restored_seconds,omitempty"`
	RestoreError    string   `json:"restore_error,omitempty"`
	// FailureDetection are the orchestrator's settings that decide how
	// soon a lost node's work moves (Nomad's heartbeat TTLs), as in effect.
	FailureDetection map[string]string `json:"failure_detection,omitempty"`
	// TimeoutsInStep are the load's timed-out requests over the whole step.
	TimeoutsInStep int64 `json:"timeouts_in_step,omitempty"`
	// HarnessEndpoint names the harness's own API address that was on the
	// node hit ("DOCKER_HOST=tcp://10.77.0.11:2375"): while it is away the
	// harness, not the cluster, lost the API, and what it measured through
	// it (the scheduling probe, recovery) says so.
	HarnessEndpoint string `json:"harness_endpoint,omitempty"`
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
	// CauseAutoscaler: an instance of the autoscaled group added or removed
	// during a scaling step.
	CauseAutoscaler = "autoscaler"
	// CauseEarlierNodeFault: the late report of an instance an earlier
	// step's node fault took down (its node's agent, back, tells of it).
	CauseEarlierNodeFault = "an earlier step's node fault"
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
