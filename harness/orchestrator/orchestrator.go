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
	// CPUMode is how the pack has the CPU intent enforced (meta
	// orchbench_cpu_mode, else inferred from the driver and resources):
	// CPUModeQuota, CPUModeShares, CPUModeCPUSet or CPUModeUnenforced.
	CPUMode string `json:"cpu_mode,omitempty"`
	// Image is the container image and its ID when the driver has one.
	Image   string `json:"image,omitempty"`
	ImageID string `json:"image_id,omitempty"`
}

// How a task's CPU intent is enforced, as packs declare it in orchbench_cpu_mode.
const (
	// CPUModeQuota: a CFS quota of the declared cores (docker with cpu_hard_limit).
	CPUModeQuota = "quota"
	// CPUModeShares: no cap, the reservation only weighs the task against others.
	CPUModeShares = "shares"
	// CPUModeCPUSet: an exclusive cpuset of the declared whole cores (exec with cores).
	CPUModeCPUSet = "cpuset"
	// CPUModeUnenforced: a cap is declared but the driver can only reserve it
	// (exec with fractional cores), so it cannot hold.
	CPUModeUnenforced = "unenforced"
)

// Limits are the CPU and memory limits the kernel actually enforces on a task,
// read back from its cgroup.
type Limits struct {
	Placement
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
