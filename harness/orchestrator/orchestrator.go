// Package orchestrator is the contract every orchestrator adapter (Nomad, Swarm,
// Kubernetes) fulfils, so that the harness deploys, verifies and measures an
// application the same way whatever runs it. The pack's rendered Nomad job is
// the single source of truth: the Nomad adapter submits it, the others
// translate it.
package orchestrator

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/names"
	"github.com/orchbench/orchbench/harness/netns"
)

// Workload is what an adapter deploys: one rendered job of a pack, the
// single source of truth whatever the orchestrator, with its contract read
// once. Nomad submits the job; the other adapters translate it and refuse,
// by name, any stanza they cannot honour.
type Workload struct {
	Job *api.Job
	App contract.App
}

// NewWorkload reads the job's contract.
func NewWorkload(job *api.Job) (Workload, error) {
	app, err := contract.ParseApp(job)
	if err != nil {
		return Workload{}, err
	}
	return Workload{Job: job, App: app}, nil
}

// Deployment identifies one deployed job of an application variant.
type Deployment struct {
	Orchestrator string `json:"orchestrator"`
	Job          string `json:"job"`
	// Version counts the job's definitions as the orchestrator numbers them.
	Version uint64       `json:"version"`
	App     contract.App `json:"-"`
	// Fresh is true when Deploy changed something, so setup hooks (datasets) must run.
	Fresh bool `json:"fresh"`
	// DeployDuration is the time from submission until every instance was healthy.
	DeployDuration time.Duration `json:"deploy_duration_ns"`
}

// EntryKind is how the entry the load generator aims at is published.
type EntryKind string

const (
	// EntryHostPort: a port of the node's loopback mapped to the instance
	// (Nomad's port mapping, Swarm's host-mode publishing).
	EntryHostPort EntryKind = "host-port"
	// EntryNodePort: a Kubernetes NodePort.
	EntryNodePort EntryKind = "node-port"
	// EntryOverlay: the instance's own address on the job's overlay
	// network (Swarm), which only containers on that network reach.
	EntryOverlay EntryKind = "overlay"
)

// Endpoint is one healthy instance of a service, as the orchestrator's
// service registry sees it.
type Endpoint struct {
	Service string `json:"service"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	// Instance is the orchestrator's ID of the instance behind the endpoint
	// (a Nomad allocation, a Swarm task, a pod).
	Instance string    `json:"instance,omitempty"`
	Node     string    `json:"node,omitempty"`
	Entry    EntryKind `json:"entry,omitempty"`
	// NetNS is the network namespace the address is in, "" for the
	// harness's own: the embedded Kubernetes node lives in one of its own,
	// and whatever reaches the endpoint (probe, hooks, load) enters it.
	NetNS netns.Path `json:"netns,omitempty"`
	// HarnessNetNS says NetNS is only the harness's way in, a namespace of
	// its own machine (the emulated client node's, entered from the host):
	// the endpoint's node reaches the address in its own namespace.
	HarnessNetNS bool `json:"harness_netns,omitempty"`
	// Via is set on an instance the load reaches only through an entry
	// listed with it (a Kubernetes pod behind the NodePort, which spreads
	// connections over the pods itself): the probe checks the instance and
	// its CPU counts as the service's, but the load is not aimed at it.
	Via EntryKind `json:"via,omitempty"`
}

// LoadTargets are the endpoints the load is aimed at: every one but the
// instances reached only through an entry.
func LoadTargets(eps []Endpoint) []Endpoint {
	var out []Endpoint
	for _, ep := range eps {
		if ep.Via == "" {
			out = append(out, ep)
		}
	}
	return out
}

// NodeNetNS is the namespace the endpoint's node reaches the address in,
// as its probe is asked: NetNS, unless that is the harness's way in only.
func (e Endpoint) NodeNetNS() netns.Path {
	if e.HarnessNetNS {
		return ""
	}
	return e.NetNS
}

// HostPort returns "address:port".
func (e Endpoint) HostPort() string { return net.JoinHostPort(e.Address, strconv.Itoa(e.Port)) }

// Instance is one running task instance and what was declared for it.
type Instance struct {
	// ID is the orchestrator's ID of the instance (allocation, task, pod).
	ID    string `json:"instance"`
	Group string `json:"group"`
	Task  string `json:"task"`
	Node  string `json:"node"`
	// Driver is how the task runs (docker, exec, container).
	Driver string `json:"driver"`
	// Declared is what the pack intends to be enforced.
	Declared contract.Task `json:"declared"`
	// Restarts counts the task's restarts in place: a restarted store may
	// have lost its data.
	Restarts int `json:"restarts"`
	// Image is the container image and its ID when the driver has one.
	Image   string `json:"image,omitempty"`
	ImageID string `json:"image_id,omitempty"`
}

// Label names the instance in messages: group/task (instance 1a2b3c4d).
func (i Instance) Label() string {
	return fmt.Sprintf("%s/%s (instance %s)", i.Group, i.Task, ShortID(i.ID))
}

// Capacity is what packs are sized against.
type Capacity struct {
	Nodes int `json:"nodes"`
	// Cores and MemoryMiB are the smallest node's.
	Cores     int `json:"cores"`
	MemoryMiB int `json:"memory_mib"`
	// MHzPerCore turns declared cores into Nomad's MHz; every adapter
	// renders packs with the same figure, so their jobs are identical.
	MHzPerCore float64 `json:"mhz_per_core"`
}

// Facts are what the numbers were measured on, per node name: CPU model,
// kernel, the orchestrator's and the container runtime's versions.
type Facts map[string]map[string]string

// FactLinkDelay is the fact of the delay tc netem adds to a node's link
// (cluster/nodes.sh link_delay), "0" for none, read from the node's
// orchbench.link_delay meta or label; absent where the node says nothing.
const FactLinkDelay = "link_delay"

// Limits are the CPU and memory limits the kernel actually enforces on a task,
// read back from its cgroup.
type Limits struct {
	Instance
	// EffectiveCores is the tightest CPU cap of any kind (the task's quota,
	// an enclosing cgroup's quota, the cpuset size); 0 means none was found.
	EffectiveCores float64 `json:"effective_cores"`
	CPUSet         string  `json:"cpuset,omitempty"`
	// MemoryLimitMiB is the cgroup memory limit rounded down; 0 means unlimited.
	MemoryLimitMiB int    `json:"memory_limit_mib"`
	CgroupPath     string `json:"cgroup_path"`

	CgroupVersion int `json:"cgroup_version,omitempty"`
	// QuotaCores is the task's own CFS quota ÷ period; 0 means no quota.
	QuotaCores float64 `json:"quota_cores"`
	// CFSQuotaUS is -1 when no quota is set (cgroup v1's notation for v2's "max").
	CFSQuotaUS  int64 `json:"cfs_quota_us"`
	CFSPeriodUS int64 `json:"cfs_period_us,omitempty"`
	// AncestorQuotaCores is the tightest quota of a cgroup enclosing the
	// task's, which caps it too; 0 means none.
	AncestorQuotaCores  float64 `json:"ancestor_quota_cores,omitempty"`
	AncestorQuotaCgroup string  `json:"ancestor_quota_cgroup,omitempty"`
	CPUSetSize          int     `json:"cpuset_size,omitempty"`
	// MemoryLimitBytes is the exact hard limit; 0 means none.
	MemoryLimitBytes         int64  `json:"memory_limit_bytes"`
	MemoryCgroupPath         string `json:"memory_cgroup_path,omitempty"`
	AncestorMemoryLimitBytes int64  `json:"ancestor_memory_limit_bytes,omitempty"`
	AncestorMemoryCgroup     string `json:"ancestor_memory_cgroup,omitempty"`
	// CPUWeight is the share of contended CPU in the cgroup version's unit
	// (v1 cpu.shares, v2 cpu.weight).
	CPUWeight int64 `json:"cpu_weight,omitempty"`
	// SwapAccounted: the kernel limits the task's swap; SwapLimitBytes is
	// then the swap allowed beyond its memory limit, -1 for no limit.
	SwapAccounted  bool  `json:"swap_accounted"`
	SwapLimitBytes int64 `json:"swap_limit_bytes"`
}

// LimitsOf pairs an instance with what its cgroup enforces.
func LimitsOf(p Instance, e limits.Enforced) Limits {
	return Limits{
		Instance:       p,
		EffectiveCores: e.EffectiveCores(), CPUSet: e.CPUSet, MemoryLimitMiB: e.MemoryMiB, CgroupPath: e.CgroupPath,
		CgroupVersion: e.Version, QuotaCores: e.Cores, CFSQuotaUS: e.QuotaUS, CFSPeriodUS: e.PeriodUS,
		AncestorQuotaCores: e.AncestorCores, AncestorQuotaCgroup: e.AncestorCPUPath, CPUSetSize: e.CPUSetSize,
		MemoryLimitBytes: e.MemoryBytes, MemoryCgroupPath: e.MemoryCgroupPath,
		AncestorMemoryLimitBytes: e.AncestorMemoryBytes, AncestorMemoryCgroup: e.AncestorMemoryPath,
		CPUWeight: e.CPUWeight, SwapAccounted: e.SwapAccounted, SwapLimitBytes: e.SwapBytes,
	}
}

// FaultKind is what a fault does to one instance of a service.
type FaultKind string

const (
	// FaultKillTask kills the instance's task; the orchestrator restarts or
	// replaces it by its own policy.
	FaultKillTask FaultKind = "kill-task"
	// FaultReplaceInstance removes the instance so the orchestrator
	// schedules a new one (Nomad stops the allocation, Swarm stops the
	// task, Kubernetes deletes the pod).
	FaultReplaceInstance FaultKind = "replace-instance"
)

// FaultKinds lists every kind, for validation and messages; the node-level
// kinds (nodefault.go) act on a machine, not on an instance.
var FaultKinds = []FaultKind{FaultKillTask, FaultReplaceInstance, FaultKillNode, FaultPartitionNode, FaultKillLeader, FaultRestartAgent}

// formerFaultKinds are names a kind had before: specs and archived results
// written with them still mean the same fault.
var formerFaultKinds = map[string]FaultKind{"stop-alloc": FaultReplaceInstance}

// ParseFaultKind returns the kind a name means, its former names included;
// former is true for a name that is no longer the kind's own.
func ParseFaultKind(name string) (kind FaultKind, former, ok bool) {
	if k, found := formerFaultKinds[name]; found {
		return k, true, true
	}
	k := FaultKind(name)
	return k, false, slices.Contains(FaultKinds, k)
}

// UnmarshalText reads a kind from JSON, so results archived under a former
// name are read as the fault they describe.
func (k *FaultKind) UnmarshalText(b []byte) error {
	if kind, _, ok := ParseFaultKind(string(b)); ok {
		*k = kind
		return nil
	}
	*k = FaultKind(b)
	return nil
}

// FaultKindList is "kill-task, replace-instance", for messages.
func FaultKindList() string {
	return names.Join(FaultKinds)
}

// Fault is something done to a running deployment during load, for the HA variants.
type Fault struct {
	Kind    FaultKind `json:"kind"`
	Service string    `json:"service"`
	// Node, Agent and Duration are the node-level kinds' (nodefault.go).
	Node     string        `json:"node,omitempty"`
	Agent    string        `json:"agent,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// Orchestrator deploys and inspects applications on one orchestrator. The
// sweep sees nothing else of it: adding an orchestrator is one package
// under harness/orchestrator/ and one Register call.
type Orchestrator interface {
	Name() string
	// Capacity is what packs are sized against.
	Capacity(ctx context.Context) (Capacity, error)
	// Facts are recorded with every step.
	Facts(ctx context.Context) (Facts, error)
	// Deploy submits the workload, or reuses it when an identical version is running.
	Deploy(ctx context.Context, w Workload) (*Deployment, error)
	// WaitHealthy blocks until every instance is running and passing its health checks.
	WaitHealthy(ctx context.Context, d *Deployment, timeout time.Duration) error
	// Endpoints lists the healthy instances of a service of the deployment,
	// at the addresses the node publishes them on.
	Endpoints(ctx context.Context, d *Deployment, service string) ([]Endpoint, error)
	// Instances lists every running task instance with its declaration.
	Instances(ctx context.Context, d *Deployment) ([]Instance, error)
	// Limits reads each task's enforced limits back from the kernel.
	Limits(ctx context.Context, d *Deployment) ([]Limits, error)
	// Revision names the running definition of the deployment's job: it
	// changes on any update and on a re-creation of the same definition
	// (whose stores start empty), so setup markers can be keyed by it.
	Revision(ctx context.Context, d *Deployment) (string, error)
	// InjectFault acts on one instance of the fault's service and names it.
	InjectFault(ctx context.Context, d *Deployment, f Fault) (FaultHit, error)
	// TaskEvents lists what happened to the deployment's tasks at or after
	// since: starts, exits, OOM kills, restarts, replacements.
	TaskEvents(ctx context.Context, d *Deployment, since time.Time) ([]TaskEvent, error)
	// Stop removes the deployment and everything it created.
	Stop(ctx context.Context, d *Deployment) error
	// LoadRunner runs the load generator as this orchestrator's own
	// one-shot job, beside the application it measures.
	LoadRunner() LoadRunner
}
