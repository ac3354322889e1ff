package swarm

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/autoscaler"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// Swarm has no autoscaler. A job whose group has a scaling policy gets
// orchbench's own (package autoscaler) for as long as this process keeps
// the deployment: started by Deploy, stopped by Stop or the next Deploy of
// the job. Its metric is the node probes' CPU series of the service's tasks
// in VictoriaMetrics, the source the Nomad Autoscaler reads on Nomad.

// ScalerName names orchbench's Swarm scaler in results.
const ScalerName = "orchbench swarm scaler (target-value)"

// scaling is one running scaler.
type scaling struct {
	cancel  context.CancelFunc
	scaler  *autoscaler.Scaler
	service *translate.Service
	metric  autoscaler.Prometheus
}

// CPUQuery is the scaler's metric for a Swarm service: its tasks' mean CPU
// as a percentage of each one's cores.
func CPUQuery(service string, cores float64) string {
	return fmt.Sprintf("100 * avg(rate(orchbench_task_cpu_seconds_total{swarm_service=%q}[15s])) / %g", service, cores)
}

// serviceTarget scales a Swarm service's replicas.
type serviceTarget struct {
	c    *client.Client
	name string
}

func (t serviceTarget) Count(ctx context.Context) (int, error) {
	res, err := t.c.ServiceInspect(ctx, t.name, client.ServiceInspectOptions{})
	if err != nil {
		return 0, err
	}
	m := res.Service.Spec.Mode.Replicated
	if m == nil || m.Replicas == nil {
		return 0, fmt.Errorf("service %s is not replicated", t.name)
	}
	return int(*m.Replicas), nil
}

func (t serviceTarget) Scale(ctx context.Context, to int) error {
	res, err := t.c.ServiceInspect(ctx, t.name, client.ServiceInspectOptions{})
	if err != nil {
		return err
	}
	spec := res.Service.Spec
	n := uint64(to)
	spec.Mode.Replicated.Replicas = &n
	_, err = t.c.ServiceUpdate(ctx, res.Service.ID, client.ServiceUpdateOptions{Version: res.Service.Version, Spec: spec})
	return err
}

// startScaler runs the job's scaling policy, if it has one, replacing a
// scaler of an earlier deployment of the job.
func (o *Orchestrator) startScaler(d *deployment) error {
	o.stopScaler(d.Job)
	var svc *translate.Service
	for _, s := range d.Plan.Services {
		if s.Autoscale != nil {
			svc = s
		}
	}
	if svc == nil {
		return nil
	}
	cores := svc.Declared.WeighedCores()
	if cores <= 0 {
		return fmt.Errorf("swarm: job %s: service %s has a scaling policy but no reserved cores to hold a CPU share of", d.Job, svc.Name)
	}
	metric := autoscaler.Prometheus{URL: o.MetricsURL, Query: CPUQuery(svc.Name, cores)}
	s := &autoscaler.Scaler{Policy: *svc.Autoscale, Metric: metric, Target: serviceTarget{c: o.Engine.Client, name: svc.Name}, Log: log.Printf}
	s.Policy.Source, s.Policy.Query = "prometheus", metric.Query
	ctx, cancel := context.WithCancel(context.Background())
	o.mu.Lock()
	if o.scalers == nil {
		o.scalers = map[string]*scaling{}
	}
	o.scalers[d.Job] = &scaling{cancel: cancel, scaler: s, service: svc, metric: metric}
	o.mu.Unlock()
	go s.Run(ctx)
	return nil
}

func (o *Orchestrator) stopScaler(job string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if sc := o.scalers[job]; sc != nil {
		sc.cancel()
		delete(o.scalers, job)
	}
}

func (o *Orchestrator) scalerOf(d *orchestrator.Deployment) (*scaling, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	sc := o.scalers[d.Job]
	if sc == nil {
		return nil, fmt.Errorf("swarm: job %s has no scaler running in this process (deploy it with its scaling policy first)", d.Job)
	}
	return sc, nil
}

// Scaler names orchbench's scaler.
func (o *Orchestrator) Scaler() string { return ScalerName }

// ScaleState reads the service's replicas, its running tasks and those
// passing the group's check (which the harness runs on Swarm).
func (o *Orchestrator) ScaleState(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale) (orchestrator.ScaleState, error) {
	st := orchestrator.ScaleState{At: time.Now()}
	sd, err := o.jobOf(d)
	if err != nil {
		return st, err
	}
	sc, err := o.scalerOf(d)
	if err != nil {
		return st, err
	}
	if st.Desired, err = (serviceTarget{c: o.Engine.Client, name: sc.service.Name}).Count(ctx); err != nil {
		return st, fmt.Errorf("swarm: service %s: %w", sc.service.Name, err)
	}
	id, err := o.Engine.serviceID(ctx, sd, sc.service.Name)
	if err != nil {
		return st, err
	}
	tasks, err := o.Engine.serviceTasks(ctx, id)
	if err != nil {
		return st, err
	}
	nodes, err := o.Engine.nodeNames(ctx)
	if err != nil {
		return st, err
	}
	for _, t := range runningTasks(tasks, sd.Version) {
		st.Running++
		if h, _, err := o.Engine.health(ctx, sc.service, nodes[t.NodeID], t.Status.ContainerStatus.ContainerID); err == nil && (h == "healthy" || h == "none") {
			st.Serving++
		}
	}
	return st, nil
}

// ScaleEvents are the scaler's own actions: Swarm keeps no history of a
// service's replicas, so a change by anyone else shows only in the count
// (the scaling gate finds it there).
func (o *Orchestrator) ScaleEvents(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale, since time.Time) ([]orchestrator.ScaleEvent, error) {
	sc, err := o.scalerOf(d)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.ScaleEvent
	for _, e := range sc.scaler.Events() {
		if e.At.Before(since) {
			continue
		}
		out = append(out, orchestrator.ScaleEvent{At: e.At, From: e.From, To: e.To, By: orchestrator.ScaledByAutoscaler, Reason: e.Reason, Error: e.Error != ""})
	}
	return out, nil
}

// MetricSamples reads the scaler's query over the window from its source.
func (o *Orchestrator) MetricSamples(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale, from, to time.Time) (orchestrator.MetricSamples, error) {
	sc, err := o.scalerOf(d)
	if err != nil {
		return orchestrator.MetricSamples{}, err
	}
	out := orchestrator.MetricSamples{Source: sc.metric.URL, Query: sc.metric.Query}
	got, err := sc.metric.Range(ctx, from, to)
	out.Count, out.Last, out.Max = got.Count, got.Last, got.Max
	return out, err
}
