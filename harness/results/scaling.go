package results

import (
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// ScalingRecord is what a scaling step saw of the autoscaler: the instance
// count every second, every change of the desired count with when its
// instances ran and served, the metric the autoscaler read, and the
// figures a report compares orchestrators by. Times are seconds from the
// start of the measured load.
type ScalingRecord struct {
	// Scaler names who scaled: the Nomad Autoscaler, Kubernetes' HPA, or
	// orchbench's own Swarm scaler.
	Scaler        string             `json:"scaler"`
	Policy        contract.Autoscale `json:"policy"`
	SettleSeconds float64            `json:"settle_seconds"`
	// StepUpSeconds is when the load rose above its opening rate.
	StepUpSeconds float64        `json:"step_up_seconds"`
	Timeline      []ScalingPoint `json:"timeline"`
	Events        []ScalingEvent `json:"events,omitempty"`
	// Metric is what the autoscaler's metric source held over the load.
	Metric orchestrator.MetricSamples `json:"metric"`
	// SampleErrors counts the seconds the instance count could not be
	// read; SampleError is the last reason.
	SampleErrors int    `json:"sample_errors,omitempty"`
	SampleError  string `json:"sample_error,omitempty"`
	// StartCount is the instances serving when the load began, PeakCount
	// the most that served at once, FinalCount those serving at its end.
	StartCount int `json:"start_count"`
	PeakCount  int `json:"peak_count"`
	FinalCount int `json:"final_count"`
	// FirstDecisionSeconds is the step up to the autoscaler's first
	// scale-out; ScaleOutSeconds the step up to PeakCount serving;
	// RecoverySeconds the step up to the second from which the p99 and the
	// errors stayed within the SLO to the end (0: they never left it).
	// Nil when it did not happen.
	FirstDecisionSeconds *float64 `json:"first_decision_seconds,omitempty"`
	ScaleOutSeconds      *float64 `json:"scale_out_seconds,omitempty"`
	RecoverySeconds      *float64 `json:"recovery_seconds,omitempty"`
	// The requests and errors from the step up until the SLO held again
	// (until the end when it never did): what users saw meanwhile.
	RequestsWhileScaling int64 `json:"requests_while_scaling"`
	ErrorsWhileScaling   int64 `json:"errors_while_scaling"`
	// AchievedAfterRatio is the throughput achieved over offered from the
	// recovery to the end (0 when unknown: no recovery, or a closed loop).
	AchievedAfterRatio float64 `json:"achieved_after_ratio,omitempty"`
}

// ScalingPoint is the instance count at one moment.
type ScalingPoint struct {
	T       float64 `json:"t"`
	Desired int     `json:"desired"`
	Running int     `json:"running"`
	Serving int     `json:"serving"`
}

// ScalingEvent is one change of the desired count, with when the first
// new instance ran and when all of them served (a scale-out), in seconds
// from the start of the measured load.
type ScalingEvent struct {
	T      float64 `json:"t"`
	From   int     `json:"from"`
	To     int     `json:"to"`
	By     string  `json:"by"`
	Reason string  `json:"reason,omitempty"`
	Error  bool    `json:"error,omitempty"`
	// RunningSeconds and ServingSeconds are after T.
	RunningSeconds *float64 `json:"running_seconds,omitempty"`
	ServingSeconds *float64 `json:"serving_seconds,omitempty"`
}
