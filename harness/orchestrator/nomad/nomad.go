// Package nomad is the Nomad adapter of the orchestrator contract: it submits
// the pack's rendered job as it is, waits for Consul health, and reads the
// enforced limits of every task back from the kernel.
package nomad

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// Adapter talks to one Nomad cluster and the Consul it registers services in.
type Adapter struct {
	Client     *api.Client
	ConsulAddr string
	HTTP       *http.Client
	// Progress, when set, receives a line whenever WaitHealthy's state changes.
	Progress io.Writer
	// PollInterval is how often WaitHealthy looks (default 500 ms).
	PollInterval time.Duration
}

// New connects to Nomad at nomadAddr (NOMAD_ADDR or 127.0.0.1:4646 when empty)
// and Consul at consulAddr (CONSUL_HTTP_ADDR or 127.0.0.1:8500 when empty).
func New(nomadAddr, consulAddr string) (*Adapter, error) {
	cfg := api.DefaultConfig()
	if nomadAddr != "" {
		cfg.Address = nomadAddr
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("nomad: %w", err)
	}
	if consulAddr == "" {
		consulAddr = os.Getenv("CONSUL_HTTP_ADDR")
	}
	if consulAddr == "" {
		consulAddr = "http://127.0.0.1:8500"
	}
	if !strings.Contains(consulAddr, "://") {
		consulAddr = "http://" + consulAddr
	}
	return &Adapter{Client: c, ConsulAddr: strings.TrimRight(consulAddr, "/"), HTTP: &http.Client{Timeout: 10 * time.Second}}, nil
}

var _ orchestrator.Orchestrator = (*Adapter)(nil)

func (a *Adapter) Name() string { return "nomad" }

func qo(ctx context.Context) *api.QueryOptions { return (&api.QueryOptions{}).WithContext(ctx) }
func wo(ctx context.Context) *api.WriteOptions { return (&api.WriteOptions{}).WithContext(ctx) }

// ParseHCL turns rendered job text into a typed job through Nomad's own parser.
func (a *Adapter) ParseHCL(text string) (*api.Job, error) {
	job, err := a.Client.Jobs().ParseHCL(text, true)
	if err != nil {
		return nil, fmt.Errorf("nomad: parse job: %w", err)
	}
	return job, nil
}

// NodeCPU returns the MHz per core and the core count of the first ready node,
// which packs need to turn cores into Nomad's MHz.
func (a *Adapter) NodeCPU(ctx context.Context) (mhzPerCore float64, cores int, err error) {
	nodes, _, err := a.Client.Nodes().List(qo(ctx))
	if err != nil {
		return 0, 0, fmt.Errorf("nomad: list nodes: %w", err)
	}
	for _, n := range nodes {
		if n.Status != "ready" {
			continue
		}
		node, _, err := a.Client.Nodes().Info(n.ID, qo(ctx))
		if err != nil {
			return 0, 0, fmt.Errorf("nomad: node %s: %w", n.Name, err)
		}
		total, _ := strconv.ParseFloat(node.Attributes["cpu.totalcompute"], 64)
		cores, _ = strconv.Atoi(node.Attributes["cpu.numcores"])
		if node.NodeResources != nil && node.NodeResources.Cpu.CpuShares > 0 {
			total = float64(node.NodeResources.Cpu.CpuShares)
		}
		if total == 0 || cores == 0 {
			return 0, 0, fmt.Errorf("nomad: node %s has no CPU fingerprint", n.Name)
		}
		return total / float64(cores), cores, nil
	}
	return 0, 0, errors.New("nomad: no ready node")
}

// nodeAttributeKeys are the fingerprinted facts recorded with every result:
// what the numbers were measured on.
var nodeAttributeKeys = []string{
	"cpu.modelname", "cpu.numcores", "cpu.frequency", "cpu.totalcompute", "memory.totalbytes",
	"kernel.name", "kernel.version", "os.name", "os.version", "nomad.version", "driver.docker.version",
	"unique.cgroup.version",
}

// NodeAttributes returns the recorded facts of every ready node by node name.
func (a *Adapter) NodeAttributes(ctx context.Context) (map[string]map[string]string, error) {
	nodes, _, err := a.Client.Nodes().List(qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: list nodes: %w", err)
	}
	out := map[string]map[string]string{}
	for _, n := range nodes {
		if n.Status != "ready" {
			continue
		}
		node, _, err := a.Client.Nodes().Info(n.ID, qo(ctx))
		if err != nil {
			return nil, fmt.Errorf("nomad: node %s: %w", n.Name, err)
		}
		attrs := map[string]string{}
		for _, k := range nodeAttributeKeys {
			if v, ok := node.Attributes[k]; ok {
				attrs[k] = v
			}
		}
		out[n.Name] = attrs
	}
	return out, nil
}

// Deploy registers the job, or reuses the running one when Nomad's plan shows no change.
func (a *Adapter) Deploy(ctx context.Context, job *api.Job) (*orchestrator.Deployment, error) {
	if job == nil || job.ID == nil {
		return nil, errors.New("nomad: deploy: job without an ID")
	}
	id := *job.ID
	d := &orchestrator.Deployment{Orchestrator: a.Name(), Job: id, Meta: job.Meta}
	if cur, _, err := a.Client.Jobs().Info(id, qo(ctx)); err == nil && cur.Status != nil && *cur.Status == "running" && (cur.Stop == nil || !*cur.Stop) {
		plan, _, err := a.Client.Jobs().PlanOpts(job, &api.PlanOptions{Diff: true}, wo(ctx))
		if err == nil && plan.Diff != nil && plan.Diff.Type == "None" {
			d.Version = *cur.Version
			return d, nil
		}
	}
	resp, _, err := a.Client.Jobs().Register(job, wo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: register job %s: %w", id, err)
	}
	d.Fresh = true
	cur, _, err := a.Client.Jobs().Info(id, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: job %s after register (eval %s): %w", id, resp.EvalID, err)
	}
	d.Version = *cur.Version
	return d, nil
}

// currentAllocs are the allocations of the deployment's job version that are
// meant to run; older versions still stopping are not part of the deployment.
func (a *Adapter) currentAllocs(ctx context.Context, d *orchestrator.Deployment) ([]*api.AllocationListStub, error) {
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
func (a *Adapter) WaitHealthy(ctx context.Context, d *orchestrator.Deployment, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var last string
	for {
		ok, state, err := a.healthy(ctx, d)
		if err != nil && ctx.Err() != nil {
			// the bound ran out during a request: say how far it got
			return fmt.Errorf("nomad: job %s not healthy after %s (last state: %s)", d.Job, timeout, last)
		}
		if err != nil {
			return err
		}
		if a.Progress != nil && state != last {
			fmt.Fprintf(a.Progress, "job %s: %s\n", d.Job, state)
		}
		last = state
		if ok {
			d.DeployDuration = time.Since(start)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nomad: job %s not healthy after %s (last state: %s)", d.Job, timeout, last)
		case <-time.After(a.poll()):
		}
	}
}

func (a *Adapter) poll() time.Duration {
	if a.PollInterval > 0 {
		return a.PollInterval
	}
	return 500 * time.Millisecond
}

// healthy reports whether the deployment is ready, and a one-line state.
func (a *Adapter) healthy(ctx context.Context, d *orchestrator.Deployment) (bool, string, error) {
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
		return false, "", fmt.Errorf("nomad: job %s: deployment %s %s: %s", d.Job, orchestrator.ShortID(dep.ID), dep.Status, dep.StatusDescription)
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
func (a *Adapter) placementFailure(ctx context.Context, jobID string) string {
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
			e := ts.Events[n-1]
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

type consulEntry struct {
	Node struct {
		Node string `json:"Node"`
	} `json:"Node"`
	Service struct {
		ID      string `json:"ID"`
		Service string `json:"Service"`
		Address string `json:"Address"`
		Port    int    `json:"Port"`
	} `json:"Service"`
	Checks []struct {
		Status string `json:"Status"`
	} `json:"Checks"`
}

// Nomad names Consul service IDs _nomad-task-<allocID>-<group/task>-<service>-<port>.
func (e consulEntry) allocID() string {
	id := strings.TrimPrefix(e.Service.ID, "_nomad-task-")
	if len(id) >= 36 {
		return id[:36]
	}
	return ""
}

func (e consulEntry) passing() bool {
	for _, c := range e.Checks {
		if c.Status != "passing" {
			return false
		}
	}
	return true
}

func (a *Adapter) consulHealth(ctx context.Context, service string, passingOnly bool) ([]consulEntry, error) {
	u := a.ConsulAddr + "/v1/health/service/" + url.PathEscape(service)
	if passingOnly {
		u += "?passing=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("consul: health of %s: %w", service, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("consul: health of %s: %s", service, resp.Status)
	}
	var entries []consulEntry
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		return nil, fmt.Errorf("consul: health of %s: %w", service, err)
	}
	return entries, nil
}

// Endpoints lists the passing Consul instances of service that belong to the
// deployment's current allocations.
func (a *Adapter) Endpoints(ctx context.Context, d *orchestrator.Deployment, service string) ([]orchestrator.Endpoint, error) {
	allocs, err := a.currentAllocs(ctx, d)
	if err != nil {
		return nil, err
	}
	current := map[string]bool{}
	for _, s := range allocs {
		current[s.ID] = true
	}
	entries, err := a.consulHealth(ctx, service, true)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Endpoint
	for _, e := range entries {
		if !current[e.allocID()] {
			continue
		}
		out = append(out, orchestrator.Endpoint{Service: service, Address: e.Service.Address, Port: e.Service.Port, AllocID: e.allocID(), Node: e.Node.Node})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("consul: no passing instance of service %q belongs to job %s version %d", service, d.Job, d.Version)
	}
	return out, nil
}

// Scale sets a group's count.
func (a *Adapter) Scale(ctx context.Context, d *orchestrator.Deployment, group string, count int) error {
	_, _, err := a.Client.Jobs().Scale(d.Job, group, &count, "orchbench scale", false, nil, wo(ctx))
	if err != nil {
		return fmt.Errorf("nomad: scale %s/%s to %d: %w", d.Job, group, count, err)
	}
	return nil
}

// InjectFault kills one task instance of a service ("kill-task") or stops one
// of its allocations so Nomad reschedules it ("stop-alloc").
func (a *Adapter) InjectFault(ctx context.Context, d *orchestrator.Deployment, f orchestrator.Fault) error {
	eps, err := a.Endpoints(ctx, d, f.Service)
	if err != nil {
		return err
	}
	alloc, _, err := a.Client.Allocations().Info(eps[0].AllocID, qo(ctx))
	if err != nil {
		return fmt.Errorf("nomad: alloc %s: %w", eps[0].AllocID, err)
	}
	switch f.Kind {
	case "kill-task":
		for task := range alloc.TaskStates {
			if err := a.Client.Allocations().Signal(alloc, qo(ctx), task, "SIGKILL"); err != nil {
				return fmt.Errorf("nomad: kill task %s of alloc %s: %w", task, orchestrator.ShortID(alloc.ID), err)
			}
		}
	case "stop-alloc":
		if _, err := a.Client.Allocations().Stop(alloc, qo(ctx)); err != nil {
			return fmt.Errorf("nomad: stop alloc %s: %w", orchestrator.ShortID(alloc.ID), err)
		}
	default:
		return fmt.Errorf("nomad: unknown fault %q (valid: kill-task, stop-alloc)", f.Kind)
	}
	return nil
}

// Stop deregisters and purges the job.
func (a *Adapter) Stop(ctx context.Context, d *orchestrator.Deployment) error {
	if _, _, err := a.Client.Jobs().Deregister(d.Job, true, wo(ctx)); err != nil {
		return fmt.Errorf("nomad: stop %s: %w", d.Job, err)
	}
	return nil
}
