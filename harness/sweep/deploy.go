package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/placement"
	"github.com/orchbench/orchbench/harness/results"
)

// A configuration's deployment over a sweep: deployed (or reused) before
// its first step, stopped after its last, and every job the sweep started
// stopped at the end or on an interruption.

// deployment is one configuration's deployed jobs and what was verified once.
type deployment struct {
	orch orchestrator.Orchestrator
	jobs []*orchestrator.Deployment
	app  *orchestrator.Deployment // the job with orchbench_service meta
	// ready: every job deployed and healthy once; a deployment that failed
	// is kept only so that it is stopped, never reused
	ready bool
	// dataset: whether setup and verification have run (setup.go)
	dataset datasetState
	// brokeAt is the step that broke last on this deployment, until the
	// next step has found it answering again or deployed it anew
	brokeAt string
}

// deploy renders the step's pack variant and deploys it, unless this
// configuration is already deployed and the policy keeps it. Deployments on
// other orchestrators are torn down first: one machine cannot hold the same
// application twice without each disturbing the other's measurement.
func (r *Runner) deploy(ctx context.Context, st experiment.Step, sr *results.StepResult) (*deployment, error) {
	key := st.Configuration()
	if d, ok := r.deployments[key]; ok && !st.Redeploy && d.ready {
		// a reused deployment is verified again: an instance may have died,
		// or a fault of the previous step may still be healing
		for _, j := range d.jobs {
			if err := d.orch.WaitHealthy(ctx, j, r.HealthTimeout); err != nil {
				return nil, err
			}
		}
		sr.Metadata["deployment"] = "reused"
		return d, nil
	} else if ok {
		r.stop(d)
		delete(r.deployments, key)
	}
	o := r.Orchestrators[st.Orchestrator]
	for _, k := range r.deploymentKeys() {
		if other := r.deployments[k]; other.orch.Name() != o.Name() {
			fmt.Fprintf(r.Out, "stopping %s on %s before deploying on %s\n", k, other.orch.Name(), o.Name())
			r.stop(other)
			delete(r.deployments, k)
		}
	}
	jobs, err := r.render(ctx, st, o)
	if err != nil {
		return nil, err
	}
	if err := r.runPrepareHooks(ctx, jobs, sr); err != nil {
		return nil, err
	}
	// Registered before anything can fail, so a job that deployed but never
	// became healthy is stopped with its configuration, not left pending
	// with a reservation the next configuration needs.
	dep := &deployment{orch: o}
	r.deployments[key] = dep
	for _, job := range jobs {
		w, err := orchestrator.NewWorkload(job)
		if err != nil {
			return nil, err
		}
		d, err := o.Deploy(ctx, w)
		if err != nil {
			return nil, err
		}
		dep.jobs = append(dep.jobs, d)
		if d.App.Measured() && dep.app == nil {
			dep.app = d
		}
	}
	if dep.app == nil {
		return nil, fmt.Errorf("pack %s declares no %s in any job's meta: the harness cannot tell which service to load", st.Pack, contract.KeyService)
	}
	for _, d := range dep.jobs {
		if err := o.WaitHealthy(ctx, d, r.HealthTimeout); err != nil {
			return nil, err
		}
	}
	fresh := false
	for _, d := range dep.jobs {
		fresh = fresh || d.Fresh
	}
	sr.Metadata["deployment"] = map[bool]string{true: "fresh", false: "reused running version"}[fresh]
	dep.dataset.fresh = fresh
	dep.ready = true
	return dep, nil
}

// render renders the step's pack with its variables through the one render
// function the CLI uses too; mhz_per_core comes from the orchestrator's node
// so declared cores become the right CFS quota.
func (r *Runner) render(ctx context.Context, st experiment.Step, o orchestrator.Orchestrator) ([]*api.Job, error) {
	p, err := pack.Load(filepath.Join(r.PacksDir, st.Pack))
	if err != nil {
		return nil, err
	}
	overrides := map[string]string{}
	for k, v := range st.Vars {
		overrides[k] = experiment.VarText(v)
	}
	mode, overrides, err := placement.Take(overrides)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", st.ID, err)
	}
	rendered, err := p.RenderSized(overrides, nil, func() (float64, error) {
		c, err := r.capacityOf(ctx, o)
		return c.MHzPerCore, err
	})
	if err != nil {
		return nil, err
	}
	jobs, err := r.Parse(rendered)
	if err != nil {
		return nil, err
	}
	if err := placement.Apply(jobs, mode); err != nil {
		return nil, err
	}
	r.Registry.Rewrite(jobs)
	return jobs, nil
}

// capacityOf is the orchestrator's capacity, read once: it turns declared
// cores into Nomad's MHz for packs and the load job alike.
func (r *Runner) capacityOf(ctx context.Context, o orchestrator.Orchestrator) (orchestrator.Capacity, error) {
	if c, ok := r.capacity[o.Name()]; ok {
		return c, nil
	}
	c, err := o.Capacity(ctx)
	if err != nil {
		return c, err
	}
	r.capacity[o.Name()] = c
	return c, nil
}

func (r *Runner) stop(d *deployment) {
	// Stopped allocations' directories, their log files with them, are
	// removed by Nomad: a paused agent must ship them first.
	if r.agentPaused {
		if err := r.resumeAgent(context.Background()); err != nil {
			fmt.Fprintf(r.Out, "  warning: %v; the stopped deployment's last log lines may not be shipped\n", err)
		}
	}
	for _, j := range d.jobs {
		if err := d.orch.Stop(context.Background(), j); err != nil {
			fmt.Fprintf(r.Out, "  warning: %v\n", err)
		}
	}
}

func (r *Runner) deploymentKeys() []string {
	keys := make([]string, 0, len(r.deployments))
	for k := range r.deployments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stopFinished stops a configuration's deployment unless the next step to
// run uses it: its reservation would keep the next configuration from being
// placed on a small node, and its idle tasks would share the machine with
// the next measurement. The next step uses it when it is a later step of
// the same configuration, or renders one of its jobs (a spec whose app
// blocks share one deployment on purpose, such as a fault and the check
// after it). Only the next step counts: a deployment kept for a step
// further on would run beside whatever deploys in between (a resumed HA
// sweep kept the social network's horizontal variant for a later fault,
// and the baseline deployed next beside it found every worker's memory
// taken).
func (r *Runner) stopFinished(ctx context.Context, config string, rest []experiment.Step, done map[string]bool) {
	d, ok := r.deployments[config]
	if !ok || r.Keep {
		return
	}
	if next, ok := firstToRun(rest, done); ok && r.needs(ctx, next, config, d) {
		return
	}
	r.stop(d)
	delete(r.deployments, config)
}

// firstToRun is the first step of rest not settled already.
func firstToRun(rest []experiment.Step, done map[string]bool) (experiment.Step, bool) {
	for _, st := range rest {
		if !done[st.ID] {
			return st, true
		}
	}
	return experiment.Step{}, false
}

// needs reports whether step st runs on deployment d of configuration
// config rather than beside or instead of it.
func (r *Runner) needs(ctx context.Context, st experiment.Step, config string, d *deployment) bool {
	if st.Configuration() == config {
		// deploy = "per-step" redeploys every step: nothing to keep for it
		return !st.Redeploy
	}
	if r.Orchestrators[st.Orchestrator] != d.orch {
		return false // deploy stops deployments on other orchestrators
	}
	ids, err := r.renderedJobIDs(ctx, st)
	if err != nil {
		return true // the step will report it; keeping a deployment is the safe side
	}
	for _, j := range d.jobs {
		if slices.Contains(ids, j.Job) {
			return true
		}
	}
	return false
}

// renderedJobIDs are the job IDs a step's configuration deploys.
func (r *Runner) renderedJobIDs(ctx context.Context, st experiment.Step) ([]string, error) {
	if ids, ok := r.jobIDs[st.Configuration()]; ok {
		return ids, nil
	}
	jobs, err := r.render(ctx, st, r.Orchestrators[st.Orchestrator])
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, j := range jobs {
		if j.ID != nil {
			ids = append(ids, *j.ID)
		}
	}
	r.jobIDs[st.Configuration()] = ids
	return ids, nil
}

func (r *Runner) stopAll() {
	if r.Keep {
		return
	}
	for _, k := range r.deploymentKeys() {
		r.stop(r.deployments[k])
	}
}
