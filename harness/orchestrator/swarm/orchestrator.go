package swarm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// Name is the adapter's name in specs, flags and results.
const Name = "swarm"

func init() {
	orchestrator.Register(Name, func(cfg orchestrator.Config) (orchestrator.Orchestrator, error) {
		a, err := New(cfg.DockerHost)
		if err != nil {
			return nil, err
		}
		a.Progress = cfg.Progress
		return &Orchestrator{Adapter: a, Load: &LoadRunner{Client: a.Client, Image: cfg.LoadImage}}, nil
	})
}

// Orchestrator is the Swarm adapter behind the orchestrator contract: it
// keeps the adapter's own deployment of each job, which holds the
// translation plan the harness's neutral deployment has no room for.
type Orchestrator struct {
	Adapter *Adapter
	Load    *LoadRunner

	mu       sync.Mutex
	deployed map[string]*Deployment
}

var _ orchestrator.Orchestrator = (*Orchestrator)(nil)

func (o *Orchestrator) Name() string { return Name }

// LoadRunner is a replicated Swarm job of the orchbench image on the host network.
func (o *Orchestrator) LoadRunner() orchestrator.LoadRunner { return o.Load }

// Capacity of the swarm's ready nodes; the MHz per core is also what the
// translation turns resources.cpu into cores with.
func (o *Orchestrator) Capacity(ctx context.Context) (orchestrator.Capacity, error) {
	c, err := o.Adapter.Capacity(ctx)
	if err != nil {
		return orchestrator.Capacity{}, err
	}
	if o.Adapter.Options.MHzPerCore == 0 {
		o.Adapter.Options.MHzPerCore = c.MHzPerCore
	}
	return orchestrator.Capacity{Nodes: c.Nodes, Cores: int(c.Cores) / max(c.Nodes, 1), MemoryMiB: int(c.MemoryBytes>>20) / max(c.Nodes, 1), MHzPerCore: c.MHzPerCore}, nil
}

func (o *Orchestrator) Facts(ctx context.Context) (orchestrator.Facts, error) {
	return o.Adapter.Facts(ctx)
}

// Deploy translates and deploys the job.
func (o *Orchestrator) Deploy(ctx context.Context, w orchestrator.Workload) (*orchestrator.Deployment, error) {
	if o.Adapter.Options.MHzPerCore == 0 {
		if _, err := o.Capacity(ctx); err != nil {
			return nil, err
		}
	}
	d, err := o.Adapter.Deploy(ctx, w.Job)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	if o.deployed == nil {
		o.deployed = map[string]*Deployment{}
	}
	o.deployed[d.Job] = d
	o.mu.Unlock()
	version, err := o.specVersion(ctx, d.Job)
	if err != nil {
		return nil, err
	}
	return &orchestrator.Deployment{Orchestrator: Name, Job: d.Job, Version: version, App: w.App, Fresh: d.Fresh}, nil
}

// specVersion numbers the job's definition as Swarm does: the highest
// version index of its services' specs, which grows on every change.
func (o *Orchestrator) specVersion(ctx context.Context, job string) (uint64, error) {
	services, err := o.Adapter.jobServices(ctx, job)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, s := range services {
		v = max(v, s.Version.Index)
	}
	return v, nil
}

// deployment is the adapter's record of a job this process deployed.
func (o *Orchestrator) deployment(d *orchestrator.Deployment) (*Deployment, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	sd, ok := o.deployed[d.Job]
	if !ok {
		return nil, fmt.Errorf("swarm: job %s was not deployed by this process (deploy it first)", d.Job)
	}
	return sd, nil
}

func (o *Orchestrator) WaitHealthy(ctx context.Context, d *orchestrator.Deployment, timeout time.Duration) error {
	sd, err := o.deployment(d)
	if err != nil {
		return err
	}
	if err := o.Adapter.WaitHealthy(ctx, sd, timeout); err != nil {
		return err
	}
	d.DeployDuration = sd.DeployDuration
	return nil
}

func (o *Orchestrator) Endpoints(ctx context.Context, d *orchestrator.Deployment, service string) ([]orchestrator.Endpoint, error) {
	sd, err := o.deployment(d)
	if err != nil {
		return nil, err
	}
	eps, err := o.Adapter.Endpoints(ctx, sd, service)
	if err != nil {
		return nil, err
	}
	out := make([]orchestrator.Endpoint, 0, len(eps))
	for _, e := range eps {
		out = append(out, orchestrator.Endpoint{Service: e.Service, Address: e.Address, Port: e.Port, Instance: e.Instance, Node: e.Node,
			Entry: orchestrator.EntryKind(e.Entry)})
	}
	return out, nil
}

func instanceOf(in Instance) orchestrator.Instance {
	return orchestrator.Instance{ID: in.ID, Group: in.Group, Task: in.Task, Node: in.Node, Driver: in.Driver, Declared: in.Declared,
		Restarts: in.Restarts, Image: in.Image, ImageID: in.ImageID}
}

func (o *Orchestrator) Instances(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Instance, error) {
	sd, err := o.deployment(d)
	if err != nil {
		return nil, err
	}
	ins, err := o.Adapter.Instances(ctx, sd)
	if err != nil {
		return nil, err
	}
	out := make([]orchestrator.Instance, 0, len(ins))
	for _, in := range ins {
		out = append(out, instanceOf(in))
	}
	return out, nil
}

func (o *Orchestrator) Limits(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Limits, error) {
	sd, err := o.deployment(d)
	if err != nil {
		return nil, err
	}
	lims, err := o.Adapter.Limits(ctx, sd)
	if err != nil {
		return nil, err
	}
	out := make([]orchestrator.Limits, 0, len(lims))
	for _, l := range lims {
		out = append(out, orchestrator.LimitsOf(instanceOf(l.Instance), l.Enforced))
	}
	return out, nil
}

func (o *Orchestrator) Revision(ctx context.Context, d *orchestrator.Deployment) (string, error) {
	return o.Adapter.Revision(ctx, &Deployment{Job: d.Job})
}

// InjectFault kills one task's container (Swarm starts a new task in its
// slot) or stops it gracefully, so Swarm schedules a replacement: Swarm has
// no call that removes a single task.
func (o *Orchestrator) InjectFault(ctx context.Context, d *orchestrator.Deployment, f orchestrator.Fault) (orchestrator.FaultHit, error) {
	sd, err := o.deployment(d)
	if err != nil {
		return orchestrator.FaultHit{}, err
	}
	var task string
	switch f.Kind {
	case orchestrator.FaultKillTask:
		task, err = o.Adapter.KillTask(ctx, sd, f.Service)
	case orchestrator.FaultReplaceInstance:
		task, err = o.Adapter.ReplaceTask(ctx, sd, f.Service)
	default:
		err = fmt.Errorf("swarm: unknown fault %q (valid: %s)", f.Kind, orchestrator.FaultKindList())
	}
	hit := orchestrator.FaultHit{Instance: task}
	if svc := sd.Plan.Service(f.Service); svc != nil {
		hit.Group = svc.Group
	}
	return hit, err
}

// Stop removes the job's services, network and volumes; a job this process
// did not deploy is found by its label.
func (o *Orchestrator) Stop(ctx context.Context, d *orchestrator.Deployment) error {
	if err := o.Adapter.Stop(ctx, &Deployment{Job: d.Job}); err != nil {
		return err
	}
	o.mu.Lock()
	delete(o.deployed, d.Job)
	o.mu.Unlock()
	return nil
}
