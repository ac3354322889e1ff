package nomad

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// currentAllocs are the allocations of the deployment's job version that are
// meant to run; older versions still stopping are not part of the deployment.
func (a *Orchestrator) currentAllocs(ctx context.Context, d *orchestrator.Deployment) ([]*api.AllocationListStub, error) {
	stubs, _, err := a.Client.Jobs().Allocations(d.Job, false, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: allocations of %s: %w", d.Job, err)
	}
	var out []*api.AllocationListStub
	for _, s := range stubs {
		if s.JobVersion == d.Version && s.DesiredStatus == "run" && s.ClientStatus != "complete" && s.ClientStatus != "lost" {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// WaitHealthy waits until every group has its count of running allocations of
// the current version, every allocation a deployment tracks is healthy, and
// every Consul service of the job is passing on each. It returns early when an
// allocation or the deployment fails or nothing can be placed, because waiting
// out the timeout would only hide the cause.
func (a *Orchestrator) WaitHealthy(ctx context.Context, d *orchestrator.Deployment, timeout time.Duration) error {
	start := time.Now()
	err := orchestrator.WaitUntilHealthy(ctx, Name, d.Job, timeout, a.poll(), a.Progress, func(ctx context.Context) (bool, string, error) {
		return a.healthy(ctx, d)
	})
	if err == nil {
		d.DeployDuration = time.Since(start)
	}
	return err
}

func (a *Orchestrator) poll() time.Duration {
	if a.PollInterval > 0 {
		return a.PollInterval
	}
	return 500 * time.Millisecond
}

// healthy reports whether the deployment is ready, and a one-line state.
func (a *Orchestrator) healthy(ctx context.Context, d *orchestrator.Deployment) (bool, string, error) {
	job, _, err := a.Client.Jobs().Info(d.Job, qo(ctx))
	if err != nil {
		return false, "", fmt.Errorf("nomad: job %s: %w", d.Job, err)
	}
	if failure := a.placementFailure(ctx, d.Job); failure != "" {
		return false, "", fmt.Errorf("nomad: job %s cannot be placed: %s", d.Job, failure)
	}
	// a deployment exists when a group has an update block; its per-allocation
	// verdict (the Consul checks) is part of "healthy"
	dep, _, err := a.Client.Jobs().LatestDeployment(d.Job, qo(ctx))
	if err != nil {
		return false, "", fmt.Errorf("nomad: deployment of %s: %w", d.Job, err)
	}
	tracked := dep != nil && dep.JobVersion == d.Version
	if tracked && (dep.Status == "failed" || dep.Status == "cancelled") {
		return false, "", fmt.Errorf("nomad: job %s: deployment %s %s: %s%s", d.Job, orchestrator.ShortID(dep.ID), dep.Status, dep.StatusDescription, a.failedCause(ctx, d))
	}
	allocs, err := a.currentAllocs(ctx, d)
	if err != nil {
		return false, "", err
	}
	want := 0
	for _, g := range job.TaskGroups {
		want += *g.Count
	}
	running := map[string]bool{}
	healthyAllocs := 0
	for _, s := range allocs {
		if s.ClientStatus == "failed" {
			return false, "", fmt.Errorf("nomad: job %s: allocation %s is failed: %s (see `nomad alloc status %s`)", d.Job, orchestrator.ShortID(s.ID), taskEvents(s), orchestrator.ShortID(s.ID))
		}
		if s.ClientStatus != "running" {
			continue
		}
		ready := true
		for _, ts := range s.TaskStates {
			// finished prestart hooks are "dead"; only a task still pending is not ready
			if ts.State == "pending" {
				ready = false
			}
		}
		if !ready {
			continue
		}
		running[s.ID] = true
		if s.DeploymentStatus != nil && s.DeploymentStatus.Healthy != nil {
			if !*s.DeploymentStatus.Healthy {
				return false, "", fmt.Errorf("nomad: job %s: allocation %s was marked unhealthy (see `nomad alloc status %s`)", d.Job, orchestrator.ShortID(s.ID), orchestrator.ShortID(s.ID))
			}
			healthyAllocs++
		}
	}
	if !tracked {
		healthyAllocs = len(running)
	}
	state := fmt.Sprintf("version %d: %d/%d running, %d/%d healthy", d.Version, len(running), want, healthyAllocs, want)
	if len(running) < want || healthyAllocs < want || want == 0 {
		return false, state, nil
	}
	for _, svc := range jobServices(job) {
		entries, err := a.consulHealth(ctx, svc, false)
		if err != nil {
			return false, "", err
		}
		passing := 0
		for _, e := range entries {
			if running[e.allocID()] && e.passing() {
				passing++
			}
		}
		if need := serviceInstances(job, svc); passing < need {
			return false, fmt.Sprintf("%s; service %s: %d/%d passing in Consul", state, svc, passing, need), nil
		}
	}
	return true, state, nil
}

// placementFailure describes why the latest evaluation could not place
// allocations (not enough CPU, memory, a missing driver), or "" if none.
func (a *Orchestrator) placementFailure(ctx context.Context, jobID string) string {
	evals, _, err := a.Client.Jobs().Evaluations(jobID, qo(ctx))
	if err != nil || len(evals) == 0 {
		return ""
	}
	sort.Slice(evals, func(i, j int) bool { return evals[i].CreateIndex > evals[j].CreateIndex })
	latest := evals[0]
	if len(latest.FailedTGAllocs) == 0 {
		return ""
	}
	var parts []string
	for group, m := range latest.FailedTGAllocs {
		var dims []string
		for dim, n := range m.DimensionExhausted {
			dims = append(dims, fmt.Sprintf("%s exhausted on %d node(s)", dim, n))
		}
		for c, n := range m.ConstraintFiltered {
			dims = append(dims, fmt.Sprintf("constraint %s filtered %d node(s)", c, n))
		}
		for c, n := range m.ClassExhausted {
			dims = append(dims, fmt.Sprintf("class %s exhausted on %d node(s)", c, n))
		}
		sort.Strings(dims)
		parts = append(parts, fmt.Sprintf("group %q: %d unplaced (%s)", group, m.CoalescedFailures+1, strings.Join(dims, "; ")))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func taskEvents(s *api.AllocationListStub) string {
	var out []string
	for task, ts := range s.TaskStates {
		if n := len(ts.Events); n > 0 {
			e := causeEvent(ts.Events)
			msg := e.DisplayMessage
			if msg == "" {
				msg = e.Type
			}
			out = append(out, fmt.Sprintf("task %s: %s", task, msg))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// causeEvents are the task events that say why a task never ran (an image
// the node cannot pull names the image and the registry's answer); the
// events after them only say that it gave up.
var causeEvents = map[string]bool{api.TaskDriverFailure: true, api.TaskSetupFailure: true, api.TaskFailedValidation: true, api.TaskArtifactDownloadFailed: true}

// causeEvent is the latest event that says why the task failed, else the latest.
func causeEvent(events []*api.TaskEvent) *api.TaskEvent {
	for i := len(events) - 1; i >= 0; i-- {
		if causeEvents[events[i].Type] {
			return events[i]
		}
	}
	return events[len(events)-1]
}

// failedCause is what the failed allocations of the deployment's version
// said last, "" when none failed.
func (a *Orchestrator) failedCause(ctx context.Context, d *orchestrator.Deployment) string {
	stubs, _, err := a.Client.Jobs().Allocations(d.Job, false, qo(ctx))
	if err != nil {
		return ""
	}
	for _, s := range stubs {
		if s.JobVersion == d.Version && s.ClientStatus == "failed" {
			return fmt.Sprintf("; allocation %s on %s: %s", orchestrator.ShortID(s.ID), s.NodeName, taskEvents(s))
		}
	}
	return ""
}

// jobServices lists the Consul services a job registers.
func jobServices(job *api.Job) []string {
	seen := map[string]bool{}
	var out []string
	add := func(svcs []*api.Service) {
		for _, s := range svcs {
			if s.Provider != "" && s.Provider != "consul" {
				continue
			}
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s.Name)
			}
		}
	}
	for _, g := range job.TaskGroups {
		add(g.Services)
		for _, t := range g.Tasks {
			add(t.Services)
		}
	}
	return out
}

// serviceInstances is how many instances of a service the job runs.
func serviceInstances(job *api.Job, name string) int {
	n := 0
	for _, g := range job.TaskGroups {
		count := 0
		for _, s := range g.Services {
			if s.Name == name {
				count++
			}
		}
		for _, t := range g.Tasks {
			for _, s := range t.Services {
				if s.Name == name {
					count++
				}
			}
		}
		n += count * *g.Count
	}
	return n
}
