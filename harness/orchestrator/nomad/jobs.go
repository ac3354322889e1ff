package nomad

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/pack"
)

// ParseJobs turns every rendered job file of a pack into a typed job. Job
// HCL is parsed by the Nomad agent itself (/v1/jobs/parse), so orchbench
// accepts exactly what `nomad job run` and nomad-pack accept instead of
// carrying its own jobspec parser; every adapter deploys what it returns.
// A rejection names the template file.
func (a *Orchestrator) ParseJobs(r *pack.Rendered) ([]*api.Job, error) {
	names := r.JobFiles()
	if len(names) == 0 {
		return nil, fmt.Errorf("pack %s rendered no jobs (no non-empty templates/*%s)", r.Pack.Name, ".nomad.tpl")
	}
	var jobs []*api.Job
	for _, name := range names {
		job, err := a.Client.Jobs().ParseHCL(r.Files[name], true)
		var refused api.UnexpectedResponseError
		switch {
		case errors.As(err, &refused):
			return nil, fmt.Errorf("pack %s: Nomad at %s rejected the job rendered from %s: %w",
				r.Pack.Name, a.Client.Address(), r.TemplatePath(name), err)
		case err != nil:
			return nil, fmt.Errorf("pack %s: cannot reach Nomad at %s (set NOMAD_ADDR) to parse %s: %w",
				r.Pack.Name, a.Client.Address(), r.TemplatePath(name), err)
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// Plan asks the scheduler what registering job would change, with a diff.
func (a *Orchestrator) Plan(job *api.Job) (*api.JobPlanResponse, error) {
	resp, _, err := a.Client.Jobs().Plan(job, true, nil)
	if err != nil {
		return nil, fmt.Errorf("plan job %s: %w", derefOr(job.ID), err)
	}
	return resp, nil
}

// WritePlan prints a compact summary in the spirit of `nomad job plan`: the
// job-level change, then per task group what the scheduler would do.
func WritePlan(w io.Writer, job *api.Job, plan *api.JobPlanResponse) {
	change := "None"
	if plan.Diff != nil && plan.Diff.Type != "" {
		change = plan.Diff.Type
	}
	fmt.Fprintf(w, "job %q: %s (job modify index %d)\n", derefOr(job.ID), strings.ToLower(change), plan.JobModifyIndex)
	var groups []string
	if plan.Annotations != nil {
		for g := range plan.Annotations.DesiredTGUpdates {
			groups = append(groups, g)
		}
	}
	sort.Strings(groups)
	for _, g := range groups {
		u := plan.Annotations.DesiredTGUpdates[g]
		var parts []string
		for _, c := range []struct {
			n    uint64
			what string
		}{
			{u.Place, "create"}, {u.DestructiveUpdate, "create/destroy update"},
			{u.InPlaceUpdate, "in-place update"}, {u.Stop, "destroy"},
			{u.Migrate, "migrate"}, {u.Canary, "canary"}, {u.Preemptions, "preempt"},
			{u.Ignore, "ignore"},
		} {
			if c.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
			}
		}
		if len(parts) == 0 {
			parts = []string{"no changes"}
		}
		fmt.Fprintf(w, "  group %q: %s\n", g, strings.Join(parts, ", "))
	}
	for g, metric := range plan.FailedTGAllocs {
		fmt.Fprintf(w, "  group %q: placement would fail: %d nodes evaluated, %d filtered, %d exhausted %v\n",
			g, metric.NodesEvaluated, metric.NodesFiltered, metric.NodesExhausted, metric.DimensionExhausted)
	}
	if plan.Warnings != "" {
		fmt.Fprintf(w, "  warnings: %s\n", strings.TrimSpace(plan.Warnings))
	}
}

// Status returns the job and its allocations (all versions, newest first).
func (a *Orchestrator) Status(jobID string) (*api.Job, []*api.AllocationListStub, error) {
	job, _, err := a.Client.Jobs().Info(jobID, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("job %s: %w", jobID, err)
	}
	allocs, _, err := a.Client.Jobs().Allocations(jobID, true, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("job %s allocations: %w", jobID, err)
	}
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].CreateIndex > allocs[j].CreateIndex })
	return job, allocs, nil
}

// WriteStatus prints the job status and one line per allocation.
func WriteStatus(w io.Writer, job *api.Job, allocs []*api.AllocationListStub) {
	fmt.Fprintf(w, "job %q: status %s, version %d, type %s\n", derefOr(job.ID), derefOr(job.Status), derefOr(job.Version), derefOr(job.Type))
	if len(allocs) == 0 {
		fmt.Fprintln(w, "  no allocations")
	}
	for _, a := range allocs {
		health := "-"
		if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
			health = map[bool]string{true: "healthy", false: "unhealthy"}[*a.DeploymentStatus.Healthy]
		}
		fmt.Fprintf(w, "  alloc %s  group %s  node %s  version %d  desired %s  client %s  %s\n",
			orchestrator.ShortID(a.ID), a.TaskGroup, a.NodeName, a.JobVersion, a.DesiredStatus, a.ClientStatus, health)
	}
}

// IsNotFound reports whether err is Nomad's 404, e.g. status of a job that
// was never run.
func IsNotFound(err error) bool {
	var uerr api.UnexpectedResponseError
	if errors.As(err, &uerr) {
		return uerr.StatusCode() == 404
	}
	return err != nil && strings.Contains(err.Error(), "404")
}

func derefOr[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
