package translate

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
)

// resources reads the pack's declaration, which the adapter enforces as
// limits and reservations both equal to it, so the kernel enforces exactly
// what the pack intends and a task is placed only where it fits. The
// declaration is what contract.ParseTask reads (the orchbench_* meta, else
// what Nomad's resources imply), so every orchestrator enforces what the
// limits gate checks. Cores 0, or cpu mode "shares", means no CPU limit;
// memory 0 means no memory limit; a mode the target cannot enforce (a
// cpuset, an unenforceable cap) is refused.
//
// A shares-mode task keeps its weight in Declared.WeightCores (its declared
// cores, else its MHz in cores), which caps nothing but weighs the task
// against others: an adapter that reserves CPU (Kubernetes' request)
// reserves that much, so its relative weight is the pack's.
func (t *translator) resources(w where, g *api.TaskGroup, task *api.Task) (d contract.Task, err error) {
	d, err = contract.ParseTask(t.job, g, task, t.opts.MHzPerCore)
	if err != nil {
		return d, fmt.Errorf("%s: %w", w.prefix, err)
	}
	_, declared := task.Meta[contract.KeyCores]
	_, inGroup := g.Meta[contract.KeyCores]
	_, inJob := t.job.Meta[contract.KeyCores]
	if !declared && !inGroup && !inJob && task.Resources != nil && task.Resources.CPU != nil && *task.Resources.CPU > 0 &&
		(task.Resources.Cores == nil || *task.Resources.Cores == 0) && t.opts.MHzPerCore <= 0 {
		// without the figure, MHz would read as no cap at all
		return d, w.errorf("resources.cpu = %d MHz needs the node's MHz per core to become cores (Options.MHzPerCore), or meta %s", *task.Resources.CPU, contract.KeyCores)
	}
	target := t.opts.Target
	if !target.enforces(d.CPUMode) {
		how := fmt.Sprintf("%s enforces %s", t.target, target.cpuModeText())
		if target.enforces(contract.CPUModeQuota) {
			how += fmt.Sprintf("; declare meta %s = %q", contract.KeyCPUMode, contract.CPUModeQuota)
		}
		if d.CPUMode == contract.CPUModeCPUSet {
			return d, w.errorf("cpu mode cpuset (%g whole cores, an exclusive cpuset) cannot be honoured: %s", d.Cores, how)
		}
		return d, w.errorf("cpu mode %q cannot be honoured: %s", d.CPUMode, how)
	}
	switch d.CPUMode {
	case contract.CPUModeQuota:
		if d.Cores == 0 {
			return d, w.errorf("cpu mode quota with no cores declared (meta %s): a quota of what?", contract.KeyCores)
		}
	case contract.CPUModeShares:
		d.Cores = 0
	}
	if res := task.Resources; res != nil && (res.DiskMB != nil || res.SecretsMB != nil || res.IOPS != nil) {
		t.remark(w, "resources.disk/secrets", RemarkIgnored, "volumes and the container filesystem have no size cap here")
	}
	return d, nil
}
