// Package nomad is the Nomad adapter of the orchestrator contract: it submits
// the pack's rendered job as it is, waits for Consul health, reads the
// enforced limits of every task back from the kernel, and runs the load
// generator as a dispatched batch job. Everything that speaks Nomad or
// Consul lives here.
package nomad

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/consulhttp"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/placement"
)

// Name is the adapter's name in specs, flags and results.
const Name = "nomad"

func init() {
	orchestrator.Register(Name, func(cfg orchestrator.Config) (orchestrator.Orchestrator, error) {
		a, err := New(cfg.NomadAddr, cfg.ConsulAddr)
		if err != nil {
			return nil, err
		}
		a.Progress = cfg.Progress
		a.Nodes = cfg.Nodes
		a.MetricsURL = cfg.MetricsURL
		a.Load = &LoadRunner{Client: a.Client, JobFile: cfg.LoadJobFile, Image: cfg.LoadImage, Progress: cfg.Progress}
		a.JobPrefix = cfg.LoadJobPrefix
		if a.JobPrefix != "" && a.JobPrefix != orchestrator.DefaultLoadJobPrefix {
			a.Load.JobID = a.JobPrefix + "-loadgen"
		}
		return a, nil
	})
}

// Orchestrator is the Nomad adapter: it talks to one Nomad cluster and the
// Consul it registers services in.
type Orchestrator struct {
	Client     *api.Client
	ConsulAddr string
	HTTP       *http.Client
	// Progress, when set, receives a line whenever WaitHealthy's state changes.
	Progress io.Writer
	// PollInterval is how often WaitHealthy looks (default 500 ms).
	PollInterval time.Duration
	// Load runs the generator as a dispatched batch job.
	Load *LoadRunner
	// JobPrefix starts the IDs of the load-tool jobs (ToolLoadRunner).
	JobPrefix string
	// Nodes reads the kernel of the node a task runs on; nil reads this machine.
	Nodes nodeprobe.Resolver
	// MetricsURL is the Prometheus API the Nomad Autoscaler reads its
	// metrics from (VictoriaMetrics), where the harness reads them too.
	MetricsURL string

	mhzPerCore float64
}

// New connects to Nomad at nomadAddr (NOMAD_ADDR or 127.0.0.1:4646 when empty)
// and Consul at consulAddr (CONSUL_HTTP_ADDR or 127.0.0.1:8500 when empty).
func New(nomadAddr, consulAddr string) (*Orchestrator, error) {
	cfg := api.DefaultConfig()
	if nomadAddr != "" {
		cfg.Address = nomadAddr
	}
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("nomad: %w", err)
	}
	// Consul's token, CA and client certificate from the environment, as
	// for Nomad (a remote cluster's, docs/remote.md)
	hc, err := consulhttp.Client(10 * time.Second)
	if err != nil {
		return nil, fmt.Errorf("consul: %w", err)
	}
	return &Orchestrator{Client: c, ConsulAddr: ConsulAddr(consulAddr), HTTP: hc}, nil
}

// ConsulAddr is the Consul HTTP address to use: addr, else CONSUL_HTTP_ADDR,
// else the embedded cluster's, with a scheme and no trailing slash.
func ConsulAddr(addr string) string { return consulhttp.Addr(addr) }

var _ orchestrator.Orchestrator = (*Orchestrator)(nil)

func (a *Orchestrator) Name() string { return Name }

// LoadRunner is the dispatched batch job jobs/loadgen.nomad.hcl.
func (a *Orchestrator) LoadRunner() orchestrator.LoadRunner {
	if a.Load == nil {
		a.Load = &LoadRunner{Client: a.Client}
	}
	return a.Load
}

func qo(ctx context.Context) *api.QueryOptions { return (&api.QueryOptions{}).WithContext(ctx) }
func wo(ctx context.Context) *api.WriteOptions { return (&api.WriteOptions{}).WithContext(ctx) }

// readyNodes are the full records of the ready client nodes.
func (a *Orchestrator) readyNodes(ctx context.Context) ([]*api.Node, error) {
	stubs, _, err := a.Client.Nodes().List(qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: list nodes: %w", err)
	}
	var out []*api.Node
	for _, n := range stubs {
		if n.Status != "ready" {
			continue
		}
		node, _, err := a.Client.Nodes().Info(n.ID, qo(ctx))
		if err != nil {
			return nil, fmt.Errorf("nomad: node %s: %w", n.Name, err)
		}
		out = append(out, node)
	}
	if len(out) == 0 {
		return nil, errors.New("nomad: no ready node")
	}
	return out, nil
}

// Capacity is the smallest ready node's cores and memory, and its
// fingerprinted MHz per core, which turns declared cores into Nomad's MHz.
func (a *Orchestrator) Capacity(ctx context.Context) (orchestrator.Capacity, error) {
	nodes, err := a.readyNodes(ctx)
	if err != nil {
		return orchestrator.Capacity{}, err
	}
	c := orchestrator.Capacity{Nodes: len(nodes)}
	for _, node := range nodes {
		total, _ := strconv.ParseFloat(node.Attributes["cpu.totalcompute"], 64)
		cores, _ := strconv.Atoi(node.Attributes["cpu.numcores"])
		if node.NodeResources != nil && node.NodeResources.Cpu.CpuShares > 0 {
			total = float64(node.NodeResources.Cpu.CpuShares)
		}
		if total == 0 || cores == 0 {
			return c, fmt.Errorf("nomad: node %s has no CPU fingerprint", node.Name)
		}
		memBytes, _ := strconv.ParseInt(node.Attributes["memory.totalbytes"], 10, 64)
		if c.Cores == 0 || cores < c.Cores {
			c.Cores, c.MHzPerCore = cores, total/float64(cores)
		}
		if mib := int(memBytes >> 20); c.MemoryMiB == 0 || mib < c.MemoryMiB {
			c.MemoryMiB = mib
		}
	}
	a.mhzPerCore = c.MHzPerCore
	return c, nil
}

// mhz is the MHz per core, read once.
func (a *Orchestrator) mhz(ctx context.Context) (float64, error) {
	if a.mhzPerCore > 0 {
		return a.mhzPerCore, nil
	}
	c, err := a.Capacity(ctx)
	return c.MHzPerCore, err
}

// factKeys are the fingerprinted facts recorded with every result: what the
// numbers were measured on.
var factKeys = []string{
	"cpu.modelname", "cpu.numcores", "cpu.frequency", "cpu.totalcompute", "memory.totalbytes",
	"kernel.name", "kernel.version", "os.name", "os.version", "nomad.version", "driver.docker.version",
	"unique.cgroup.version",
}

// Facts returns the recorded facts of every ready node by node name.
func (a *Orchestrator) Facts(ctx context.Context) (orchestrator.Facts, error) {
	nodes, err := a.readyNodes(ctx)
	if err != nil {
		return nil, err
	}
	out := orchestrator.Facts{}
	for _, node := range nodes {
		attrs := map[string]string{}
		for _, k := range factKeys {
			if v, ok := node.Attributes[k]; ok {
				attrs[k] = v
			}
		}
		if v, ok := node.Meta[placement.NodeLinkDelay]; ok {
			attrs[orchestrator.FactLinkDelay] = v
		}
		out[node.Name] = attrs
	}
	return out, nil
}

// Deploy registers the job, or reuses the running one when Nomad's plan shows no change.
func (a *Orchestrator) Deploy(ctx context.Context, w orchestrator.Workload) (*orchestrator.Deployment, error) {
	job := w.Job
	if job == nil || job.ID == nil {
		return nil, errors.New("nomad: deploy: job without an ID")
	}
	id := *job.ID
	d := &orchestrator.Deployment{Orchestrator: a.Name(), Job: id, App: w.App}
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

// Revision is the job's JobModifyIndex, the Raft index at which Nomad stored
// the running spec. Re-registering an identical spec keeps it (Nomad stores
// nothing new), while any change, and a stop and purge-and-recreate, each
// get a new one. The version would not do: a purged job created again
// starts at version 0 with empty stores.
func (a *Orchestrator) Revision(ctx context.Context, d *orchestrator.Deployment) (string, error) {
	info, _, err := a.Client.Jobs().Info(d.Job, qo(ctx))
	if err != nil {
		return "", fmt.Errorf("nomad: job %s: %w", d.Job, err)
	}
	if info.Version == nil || info.JobModifyIndex == nil {
		return "", fmt.Errorf("nomad: job %s has no version", d.Job)
	}
	if *info.Version != d.Version {
		return "", fmt.Errorf("nomad: job %s is at version %d, not the deployed %d: something else registered it", d.Job, *info.Version, d.Version)
	}
	return strconv.FormatUint(*info.JobModifyIndex, 10), nil
}

// stopBound bounds the wait for a stopped job's tasks to exit.
const stopBound = 90 * time.Second

// Stop deregisters the job, waits until its allocations have stopped on
// their clients, and purges it. The scheduler frees a stopped job's
// resources at once, so without the wait the next deployment is placed on
// cores the old tasks still hold: an exclusive core then overlaps, and
// Nomad's cgroup-v1 cpuset partition fails every allocation after it
// ("unable to update reserve cpuset ... device or resource busy"). A purge
// first would not do: the server forgets the allocations while the client
// is still killing them.
func (a *Orchestrator) Stop(ctx context.Context, d *orchestrator.Deployment) error {
	allocs, _, listErr := a.Client.Jobs().Allocations(d.Job, false, qo(ctx))
	if _, _, err := a.Client.Jobs().Deregister(d.Job, false, wo(ctx)); err != nil {
		return fmt.Errorf("nomad: stop %s: %w", d.Job, err)
	}
	var waitErr error
	if listErr == nil {
		waitErr = waitStopped(ctx, a.Client, d.Job, allocs, stopBound)
		// the client releases an exclusive core in a hook that runs just
		// after it reports the allocation stopped
		time.Sleep(time.Second)
	}
	if _, _, err := a.Client.Jobs().Deregister(d.Job, true, wo(ctx)); err != nil {
		return fmt.Errorf("nomad: purge %s: %w", d.Job, err)
	}
	return waitErr
}

// waitStopped polls the allocations until each has stopped on its client
// or is gone.
func waitStopped(ctx context.Context, client *api.Client, job string, allocs []*api.AllocationListStub, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for _, stub := range allocs {
		for !terminal(stub.ClientStatus) {
			if time.Now().After(deadline) {
				return fmt.Errorf("nomad: stop %s: allocation %s still %s after %s", job, stub.ID, stub.ClientStatus, bound)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
			alloc, _, err := client.Allocations().Info(stub.ID, qo(ctx))
			if err != nil {
				break // garbage-collected: stopped
			}
			stub.ClientStatus = alloc.ClientStatus
		}
	}
	return nil
}

func terminal(clientStatus string) bool {
	switch clientStatus {
	case api.AllocClientStatusComplete, api.AllocClientStatusFailed, api.AllocClientStatusLost:
		return true
	}
	return false
}
