// Package orchestrator is the contract every orchestrator adapter (Nomad, Swarm,
// Kubernetes) fulfils, so that the harness deploys, verifies and measures an
// application the same way whatever runs it. The pack's rendered Nomad job is
// the single source of truth: the Nomad adapter submits it, the others
// translate it.
package orchestrator

import (
	"context"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Deployment identifies one deployed application variant.
type Deployment struct {
	Orchestrator string            `json:"orchestrator"`
	Job          string            `json:"job"`
	Version      uint64            `json:"version"`
	Meta         map[string]string `json:"meta,omitempty"`
	// Fresh is true when Deploy changed something, so setup hooks (datasets) must run.
	Fresh bool `json:"fresh"`
	// DeployDuration is the time from submission until every instance was healthy.
	DeployDuration time.Duration `json:"deploy_duration_ns"`
}

// Endpoint is one healthy instance of a service, as the service registry sees it.
type Endpoint struct {
	Service string `json:"service"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	AllocID string `json:"alloc_id,omitempty"`
	Node    string `json:"node,omitempty"`
}

// HostPort returns "address:port".
func (e Endpoint) HostPort() string { return joinHostPort(e.Address, e.Port) }

// Placement says where one task instance runs and what was declared for it.
type Placement struct {
	AllocID string `json:"alloc_id"`
	Group   string `json:"group"`
	Task    string `json:"task"`
	Node    string `json:"node"`
	NodeID  string `json:"node_id"`
	Driver  string `json:"driver"`
	// DeclaredCores is what the pack intended, in cores (task or job meta
	// orchbench_cores); 0 means no CPU limit was intended.
	DeclaredCores float64 `json:"declared_cores"`
	// DeclaredMemoryMiB is the hard memory limit the pack intended; 0 means none.
	DeclaredMemoryMiB int `json:"declared_memory_mib"`
	// Image is the container image and its ID when the driver has one.
	Image   string `json:"image,omitempty"`
	ImageID string `json:"image_id,omitempty"`
}

// Limits are the CPU and memory limits the kernel actually enforces on a task,
// read back from its cgroup.
type Limits struct {
	Placement
	// EffectiveCores is CFS quota ÷ period, or the cpuset size when no quota is set; 0 means unlimited.
	EffectiveCores float64 `json:"effective_cores"`
	CPUSet         string  `json:"cpuset,omitempty"`
	// MemoryLimitMiB is the cgroup memory limit; 0 means unlimited.
	MemoryLimitMiB int    `json:"memory_limit_mib"`
	CgroupPath     string `json:"cgroup_path"`
}

// Fault is something done to a running deployment during load, for the HA variants.
type Fault struct {
	// Kind is "kill-task" (one instance's task is killed) or "stop-alloc"
	// (one allocation is stopped and rescheduled).
	Kind    string `json:"kind"`
	Service string `json:"service"`
}

// Orchestrator deploys and inspects applications on one orchestrator.
type Orchestrator interface {
	Name() string
	// Deploy submits the job, or reuses it when an identical version is running.
	Deploy(ctx context.Context, job *api.Job) (*Deployment, error)
	// WaitHealthy blocks until every instance is running and passing its health checks.
	WaitHealthy(ctx context.Context, d *Deployment, timeout time.Duration) error
	// Endpoints lists the healthy instances of a service of the deployment.
	Endpoints(ctx context.Context, d *Deployment, service string) ([]Endpoint, error)
	Placements(ctx context.Context, d *Deployment) ([]Placement, error)
	// Limits reads each task's enforced limits back from the kernel.
	Limits(ctx context.Context, d *Deployment) ([]Limits, error)
	Scale(ctx context.Context, d *Deployment, group string, count int) error
	InjectFault(ctx context.Context, d *Deployment, f Fault) error
	Stop(ctx context.Context, d *Deployment) error
}
