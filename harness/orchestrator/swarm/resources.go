package swarm

import (
	"fmt"
	"math"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/swarm"
	"github.com/orchbench/orchbench/harness/contract"
)

// CPU modes a Swarm service can have: a CFS quota of the declared cores, or
// no cap at all (Swarm has no cpuset and no relative shares).
const (
	CPUModeQuota  = contract.CPUModeQuota
	CPUModeShares = contract.CPUModeShares
)

// resources turns the pack's declaration into limits and reservations,
// both equal to it, so the kernel enforces exactly what the pack intends and
// Swarm places a task only where the declaration fits. The declaration is
// what contract.ParseTask reads (the orchbench_* meta, else what Nomad's
// resources imply), so Swarm enforces what the limits gate checks on every
// orchestrator. Cores 0, or cpu mode "shares", means no CPU limit; memory 0
// means no memory limit; a cpuset or an unenforceable cap is refused.
func (t *translator) resources(w where, g *api.TaskGroup, task *api.Task) (Declaration, *swarm.ResourceRequirements, error) {
	d, err := contract.ParseTask(t.job, g, task, t.opts.MHzPerCore)
	if err != nil {
		return d, nil, fmt.Errorf("swarm: %w", err)
	}
	_, declared := task.Meta[contract.KeyCores]
	_, inGroup := g.Meta[contract.KeyCores]
	_, inJob := t.job.Meta[contract.KeyCores]
	if !declared && !inGroup && !inJob && task.Resources != nil && task.Resources.CPU != nil && *task.Resources.CPU > 0 &&
		(task.Resources.Cores == nil || *task.Resources.Cores == 0) && t.opts.MHzPerCore <= 0 {
		// without the figure, MHz would read as no cap at all
		return d, nil, w.errorf("resources.cpu = %d MHz needs the node's MHz per core to become cores (Options.MHzPerCore), or meta %s", *task.Resources.CPU, contract.KeyCores)
	}
	switch d.CPUMode {
	case CPUModeQuota:
		if d.Cores == 0 {
			return d, nil, w.errorf("cpu mode quota with no cores declared (meta %s): a quota of what?", contract.KeyCores)
		}
	case CPUModeShares:
		d.Cores = 0
	case contract.CPUModeCPUSet:
		return d, nil, w.errorf("cpu mode cpuset (%g whole cores, an exclusive cpuset) cannot be honoured: Swarm enforces a CPU quota or nothing; declare meta %s = \"quota\"", d.Cores, contract.KeyCPUMode)
	default:
		return d, nil, w.errorf("cpu mode %q cannot be honoured: Swarm enforces a CPU quota or nothing", d.CPUMode)
	}
	res := task.Resources
	if res != nil && (res.DiskMB != nil || res.SecretsMB != nil || res.IOPS != nil) {
		t.remark(w, "resources.disk/secrets", RemarkIgnored, "Docker volumes and the container filesystem have no size cap here")
	}
	nano := int64(math.Round(d.Cores * 1e9))
	mem := int64(d.MemoryMiB) << 20
	if d.Cores > 0 && nano < 1e6 {
		return d, nil, w.errorf("%g cores is below Docker's minimum CPU quota (0.001 cores)", d.Cores)
	}
	if mem > 0 && mem < 6<<20 {
		return d, nil, w.errorf("%d MiB is below Docker's minimum memory limit (6 MiB)", d.MemoryMiB)
	}
	rr := &swarm.ResourceRequirements{}
	if nano > 0 || mem > 0 {
		rr.Limits = &swarm.Limit{NanoCPUs: nano, MemoryBytes: mem}
		rr.Reservations = &swarm.Resources{NanoCPUs: nano, MemoryBytes: mem}
	}
	return d, rr, nil
}

// describe renders a declaration for messages.
func describe(d Declaration) string {
	cpu := "no CPU limit"
	if d.Cores > 0 {
		cpu = fmt.Sprintf("%g cores (%s)", d.Cores, d.CPUMode)
	}
	mem := "no memory limit"
	if d.MemoryMiB > 0 {
		mem = fmt.Sprintf("%d MiB", d.MemoryMiB)
	}
	return cpu + ", " + mem
}
