package nomad

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/orchbench/orchbench/harness/autoscaler"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// The Nomad Autoscaler acts on the job's scaling block; Nomad keeps every
// scaling action as an event of the group, and the autoscaler marks its own
// with the policy's ID in the event's meta.
const autoscalerMetaKey = "nomad_policy_id"

// AutoscalerVersion is the Nomad Autoscaler cluster/versions.env pins.
const AutoscalerVersion = "v0.4.7"

// Scaler names the Nomad Autoscaler.
func (a *Orchestrator) Scaler() string { return "Nomad Autoscaler " + AutoscalerVersion }

// ScaleState counts the group's allocations whatever their job version
// (each scaling action makes a new one) and the scaled service's passing
// instances among them.
func (a *Orchestrator) ScaleState(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale) (orchestrator.ScaleState, error) {
	st := orchestrator.ScaleState{At: time.Now()}
	status, _, err := a.Client.Jobs().ScaleStatus(d.Job, qo(ctx))
	if err != nil {
		return st, fmt.Errorf("nomad: scale status of %s: %w", d.Job, err)
	}
	g, ok := status.TaskGroups[as.Group]
	if !ok {
		return st, fmt.Errorf("nomad: job %s has no group %q", d.Job, as.Group)
	}
	st.Desired = g.Desired
	job, _, err := a.Client.Jobs().Info(d.Job, qo(ctx))
	if err != nil {
		return st, fmt.Errorf("nomad: job %s: %w", d.Job, err)
	}
	st.Version = derefOr(job.Version)
	stubs, _, err := a.Client.Jobs().Allocations(d.Job, false, qo(ctx))
	if err != nil {
		return st, fmt.Errorf("nomad: allocations of %s: %w", d.Job, err)
	}
	running := map[string]bool{}
	for _, s := range stubs {
		if s.TaskGroup == as.Group && s.DesiredStatus == "run" && s.ClientStatus == "running" {
			running[s.ID] = true
		}
	}
	st.Running = len(running)
	entries, err := a.consulHealth(ctx, d.App.ScaledService(), true)
	if err != nil {
		return st, err
	}
	for _, e := range entries {
		if running[e.allocID()] {
			st.Serving++
		}
	}
	return st, nil
}

// ScaleEvents reads the group's scaling events since a time, oldest first.
func (a *Orchestrator) ScaleEvents(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale, since time.Time) ([]orchestrator.ScaleEvent, error) {
	status, _, err := a.Client.Jobs().ScaleStatus(d.Job, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: scale status of %s: %w", d.Job, err)
	}
	var out []orchestrator.ScaleEvent
	for _, e := range status.TaskGroups[as.Group].Events {
		at := time.Unix(0, int64(e.Time))
		if at.Before(since) || e.Count == nil {
			continue
		}
		ev := orchestrator.ScaleEvent{At: at, From: int(e.PreviousCount), To: int(*e.Count), By: orchestrator.ScaledByOther, Reason: e.Message, Error: e.Error}
		if _, ok := e.Meta[autoscalerMetaKey]; ok {
			ev.By = orchestrator.ScaledByAutoscaler
		}
		out = append(out, ev)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// MetricSamples runs the policy's query at its source, as the autoscaler's
// Prometheus APM does (a range query with a 1 s step), over the window.
func (a *Orchestrator) MetricSamples(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale, from, to time.Time) (orchestrator.MetricSamples, error) {
	out := orchestrator.MetricSamples{Source: a.MetricsURL, Query: as.Query}
	if as.Source != "prometheus" {
		return out, fmt.Errorf("nomad: the policy's source is %q; the harness reads the prometheus source only", as.Source)
	}
	got, err := autoscaler.Prometheus{URL: a.MetricsURL, Query: as.Query, HTTP: a.HTTP}.Range(ctx, from, to)
	out.Count, out.Last, out.Max = got.Count, got.Last, got.Max
	return out, err
}
