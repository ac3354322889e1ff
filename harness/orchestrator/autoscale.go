package orchestrator

import (
	"context"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
)

// Autoscaled is an orchestrator that can run a pack's autoscaling policy
// and report what it did. A scaling step samples ScaleState every second
// while its load runs and reads the events and the metric's samples after.
type Autoscaled interface {
	// Scaler names what scales: "Nomad Autoscaler v0.4.7".
	Scaler() string
	// ScaleState is the autoscaled group's instances now.
	ScaleState(ctx context.Context, d *Deployment, as contract.Autoscale) (ScaleState, error)
	// ScaleEvents are the changes of the group's desired count since a
	// time, by whoever made them.
	ScaleEvents(ctx context.Context, d *Deployment, as contract.Autoscale, since time.Time) ([]ScaleEvent, error)
	// MetricSamples is what the autoscaler's metric source holds of the
	// policy's metric between from and to: no samples means the
	// autoscaler could not have decided on the metric it was given.
	MetricSamples(ctx context.Context, d *Deployment, as contract.Autoscale, from, to time.Time) (MetricSamples, error)
}

// ScaleState counts an autoscaled group's instances at one moment.
type ScaleState struct {
	At time.Time `json:"at"`
	// Desired is the count the orchestrator is asked to run.
	Desired int `json:"desired"`
	// Running instances have their task running; Serving ones pass their
	// health check, which is what the entry routes to.
	Running int `json:"running"`
	Serving int `json:"serving"`
	// Version is the deployment's version now: on Nomad every scaling
	// action makes a new job version of the same definition.
	Version uint64 `json:"version,omitempty"`
}

// Scalers name who changed a desired count.
const (
	ScaledByAutoscaler = "autoscaler"
	ScaledByOther      = "other"
)

// ScaleEvent is one change of the desired count.
type ScaleEvent struct {
	At   time.Time `json:"at"`
	From int       `json:"from"`
	To   int       `json:"to"`
	// By is ScaledByAutoscaler or ScaledByOther (an operator's scale, a
	// redeployment).
	By string `json:"by"`
	// Reason is the scaler's own account (the metric and target it acted on).
	Reason string `json:"reason,omitempty"`
	// Error is set when the scaler reported the action failed.
	Error bool `json:"error,omitempty"`
}

// MetricSamples describes the policy's metric over a window.
type MetricSamples struct {
	// Source names where it was read (a URL, metrics-server, orchbench's scaler).
	Source string `json:"source"`
	Query  string `json:"query,omitempty"`
	// Count is the samples found; Last the last value (percent of the
	// reservation), meaningful when Count > 0.
	Count int     `json:"count"`
	Last  float64 `json:"last,omitempty"`
	Max   float64 `json:"max,omitempty"`
	// Note is the scaler's own word on its metric when it had none (the
	// HPA's condition: "unable to get metrics for resource cpu: ...").
	Note string `json:"note,omitempty"`
}
