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
		o, err := New(cfg.DockerHost)
		if err != nil {
			return nil, err
		}
		o.Engine.Progress = cfg.Progress
		o.Engine.Nodes = cfg.Nodes
		o.Load.Image = cfg.LoadImage
		o.MetricsURL = cfg.MetricsURL
		return o, nil
	})
}

// Orchestrator is the Swarm adapter: the engine behind the orchestrator
// contract, keeping the engine's own record of each job it deployed.
type Orchestrator struct {
	Engine *Engine
	Load   *LoadRunner

	// MetricsURL is the Prometheus API orchbench's scaler reads its
	// metric from (the cluster's VictoriaMetrics).
	MetricsURL string

	mu       sync.Mutex
	deployed map[string]*deployment
	scalers  map[string]*scaling
}

var _ orchestrator.Orchestrator = (*Orchestrator)(nil)

// New connects to the Docker daemon given by host ("" for DOCKER_HOST or the
// local socket); the load runs as a Swarm job of the same daemon.
func New(host string) (*Orchestrator, error) {
	e, err := NewEngine(host)
	if err != nil {
		return nil, err
	}
	return &Orchestrator{Engine: e, Load: &LoadRunner{Client: e.Client, Engines: e.Engines}}, nil
}

func (o *Orchestrator) Name() string { return Name }

// LoadRunner is a replicated Swarm job of the orchbench image on the host network.
func (o *Orchestrator) LoadRunner() orchestrator.LoadRunner { return o.Load }

// Capacity of the swarm's ready nodes; the MHz per core is also what the
// translation turns resources.cpu into cores with.
func (o *Orchestrator) Capacity(ctx context.Context) (orchestrator.Capacity, error) {
	c, err := o.Engine.Capacity(ctx)
	if err != nil {
		return orchestrator.Capacity{}, err
	}
	if o.Engine.Options.MHzPerCore == 0 {
		o.Engine.Options.MHzPerCore = c.MHzPerCore
	}
	return c, nil
}

func (o *Orchestrator) Facts(ctx context.Context) (orchestrator.Facts, error) {
	return o.Engine.Facts(ctx)
}

// Deploy translates and deploys the job.
func (o *Orchestrator) Deploy(ctx context.Context, w orchestrator.Workload) (*orchestrator.Deployment, error) {
	if o.Engine.Options.MHzPerCore == 0 {
		if _, err := o.Capacity(ctx); err != nil {
			return nil, err
		}
	}
	d, err := o.Engine.Deploy(ctx, w.Job)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	if o.deployed == nil {
		o.deployed = map[string]*deployment{}
	}
	o.deployed[d.Job] = d
	o.mu.Unlock()
	if err := o.startScaler(d); err != nil {
		return nil, err
	}
	version, err := o.specVersion(ctx, d.Job)
	if err != nil {
		return nil, err
	}
	return &orchestrator.Deployment{Orchestrator: Name, Job: d.Job, Version: version, App: w.App, Fresh: d.Fresh}, nil
}

// specVersion numbers the job's definition as Swarm does: the highest
// version index of its services' specs, which grows on every change.
func (o *Orchestrator) specVersion(ctx context.Context, job string) (uint64, error) {
	services, err := o.Engine.jobServices(ctx, job)
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
func (o *Orchestrator) jobOf(d *orchestrator.Deployment) (*deployment, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	sd, ok := o.deployed[d.Job]
	if !ok {
		return nil, fmt.Errorf("swarm: job %s was not deployed by this process (deploy it first)", d.Job)
	}
	return sd, nil
}

func (o *Orchestrator) WaitHealthy(ctx context.Context, d *orchestrator.Deployment, timeout time.Duration) error {
	sd, err := o.jobOf(d)
	if err != nil {
		return err
	}
	if err := o.Engine.WaitHealthy(ctx, sd, timeout); err != nil {
		return err
	}
	d.DeployDuration = sd.DeployDuration
	return nil
}

func (o *Orchestrator) Endpoints(ctx context.Context, d *orchestrator.Deployment, service string) ([]orchestrator.Endpoint, error) {
	sd, err := o.jobOf(d)
	if err != nil {
		return nil, err
	}
	eps, err := o.Engine.Endpoints(ctx, sd, service)
	if err != nil {
		return nil, err
	}
	return eps, nil
}

func (o *Orchestrator) Instances(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Instance, error) {
	sd, err := o.jobOf(d)
	if err != nil {
		return nil, err
	}
	ins, err := o.Engine.Instances(ctx, sd)
	if err != nil {
		return nil, err
	}
	out := make([]orchestrator.Instance, 0, len(ins))
	for _, in := range ins {
		out = append(out, in.Instance)
	}
	return out, nil
}

func (o *Orchestrator) Limits(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Limits, error) {
	sd, err := o.jobOf(d)
	if err != nil {
		return nil, err
	}
	return o.Engine.Limits(ctx, sd)
}

func (o *Orchestrator) Revision(ctx context.Context, d *orchestrator.Deployment) (string, error) {
	return o.Engine.Revision(ctx, &deployment{Job: d.Job})
}

// InjectFault kills one task's container (Swarm starts a new task in its
// slot) or stops it gracefully, so Swarm schedules a replacement: Swarm has
// no call that removes a single task.
func (o *Orchestrator) InjectFault(ctx context.Context, d *orchestrator.Deployment, f orchestrator.Fault) (orchestrator.FaultHit, error) {
	sd, err := o.jobOf(d)
	if err != nil {
		return orchestrator.FaultHit{}, err
	}
	var task string
	switch f.Kind {
	case orchestrator.FaultKillTask:
		task, err = o.Engine.KillTask(ctx, sd, f.Service)
	case orchestrator.FaultReplaceInstance:
		task, err = o.Engine.ReplaceTask(ctx, sd, f.Service)
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
	o.stopScaler(d.Job)
	if err := o.Engine.Stop(ctx, &deployment{Job: d.Job}); err != nil {
		return err
	}
	o.mu.Lock()
	delete(o.deployed, d.Job)
	o.mu.Unlock()
	return nil
}
