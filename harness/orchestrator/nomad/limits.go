package nomad

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// The meta keys in which packs state what the limits gate must find enforced.
const (
	metaCores   = "orchbench_cores"
	metaMemory  = "orchbench_memory_mib"
	metaCPUMode = "orchbench_cpu_mode"
)

// Placements lists every task of the current allocations with what the pack declared for it.
func (a *Adapter) Placements(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Placement, error) {
	job, _, err := a.Client.Jobs().Info(d.Job, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: job %s: %w", d.Job, err)
	}
	mhz, _, err := a.NodeCPU(ctx)
	if err != nil {
		return nil, err
	}
	allocs, err := a.currentAllocs(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Placement
	for _, s := range allocs {
		group := findGroup(job, s.TaskGroup)
		if group == nil {
			continue
		}
		for _, t := range group.Tasks {
			if t.Lifecycle != nil && !t.Lifecycle.Sidecar {
				continue // prestart/poststart hooks have finished
			}
			decl, err := declared(job, group, t, mhz)
			if err != nil {
				return nil, err
			}
			p := orchestrator.Placement{AllocID: s.ID, Group: s.TaskGroup, Task: t.Name, Node: s.NodeName, NodeID: s.NodeID, Driver: t.Driver,
				DeclaredCores: decl.cores, DeclaredMemoryMiB: decl.memoryMiB, CPUMode: decl.cpuMode}
			if img, ok := t.Config["image"].(string); ok {
				p.Image = img
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func findGroup(job *api.Job, name string) *api.TaskGroup {
	for _, g := range job.TaskGroups {
		if *g.Name == name {
			return g
		}
	}
	return nil
}

// declaration is what a pack intends to be enforced on one task.
type declaration struct {
	cores     float64
	memoryMiB int
	cpuMode   string
}

// declared reads a task's intent: the orchbench_ meta (task, then group, then
// job) when present, since the intent is what must hold; else what the Nomad
// resources imply. A declaration that does not parse is an error rather than
// "no limit", which would let any enforced limit pass unnoticed.
func declared(job *api.Job, g *api.TaskGroup, t *api.Task, mhzPerCore float64) (declaration, error) {
	where := func() string {
		return fmt.Sprintf("nomad: job %s, group %s, task %s", deref(job.ID), deref(g.Name), t.Name)
	}
	lookup := func(key string) (value, level string, ok bool) {
		for _, m := range []struct {
			level string
			meta  map[string]string
		}{{"task", t.Meta}, {"group", g.Meta}, {"job", job.Meta}} {
			if v, ok := m.meta[key]; ok {
				return v, m.level, true
			}
		}
		return "", "", false
	}
	var d declaration
	if v, level, ok := lookup(metaCores); ok {
		c, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
			return d, fmt.Errorf("%s: %s meta %s = %q is not a number of cores >= 0", where(), level, metaCores, v)
		}
		d.cores = c
	} else if t.Resources != nil {
		switch {
		case t.Resources.Cores != nil && *t.Resources.Cores > 0:
			d.cores = float64(*t.Resources.Cores)
		case t.Resources.CPU != nil && mhzPerCore > 0:
			d.cores = float64(*t.Resources.CPU) / mhzPerCore
		}
	}
	if v, level, ok := lookup(metaMemory); ok {
		m, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || m < 0 {
			return d, fmt.Errorf("%s: %s meta %s = %q is not a whole number of MiB >= 0", where(), level, metaMemory, v)
		}
		d.memoryMiB = m
	} else if t.Resources != nil {
		// memory_max, when Nomad honours it, is the hard limit; memory only reserves
		if t.Resources.MemoryMaxMB != nil && *t.Resources.MemoryMaxMB > 0 {
			d.memoryMiB = *t.Resources.MemoryMaxMB
		} else if t.Resources.MemoryMB != nil {
			d.memoryMiB = *t.Resources.MemoryMB
		}
	}
	if v, level, ok := lookup(metaCPUMode); ok {
		switch v {
		case orchestrator.CPUModeQuota, orchestrator.CPUModeShares, orchestrator.CPUModeCPUSet, orchestrator.CPUModeUnenforced:
			d.cpuMode = v
		default:
			return d, fmt.Errorf("%s: %s meta %s = %q is not a CPU mode (valid: quota, shares, cpuset, unenforced)", where(), level, metaCPUMode, v)
		}
	} else {
		d.cpuMode = inferCPUMode(t, d.cores)
	}
	return d, nil
}

// inferCPUMode is how Nomad 1.10 enforces a task's CPU when the pack does
// not say: reserved cores are a cpuset, docker turns MHz into a quota (only
// with cpu_hard_limit, which the gate then verifies), and other drivers only
// reserve MHz.
func inferCPUMode(t *api.Task, cores float64) string {
	switch {
	case t.Resources != nil && t.Resources.Cores != nil && *t.Resources.Cores > 0:
		return orchestrator.CPUModeCPUSet
	case cores == 0:
		return orchestrator.CPUModeShares
	case t.Driver == "docker":
		return orchestrator.CPUModeQuota
	default:
		return orchestrator.CPUModeUnenforced
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Limits reads every task's cgroup. It reads the local kernel, so it covers
// the tasks placed on this machine (the embedded cluster, or a harness run on
// the node itself).
func (a *Adapter) Limits(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Limits, error) {
	places, err := a.Placements(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Limits
	for _, p := range places {
		pid, imageID, err := taskPID(ctx, p)
		if err != nil {
			return nil, err
		}
		e, err := limits.ForPID(pid)
		if err != nil {
			return nil, fmt.Errorf("limits of task %s/%s in alloc %s: %w", p.Group, p.Task, orchestrator.ShortID(p.AllocID), err)
		}
		p.ImageID = imageID
		out = append(out, limitsOf(p, e))
	}
	return out, nil
}

func limitsOf(p orchestrator.Placement, e limits.Enforced) orchestrator.Limits {
	return orchestrator.Limits{
		Placement:      p,
		EffectiveCores: e.EffectiveCores(), CPUSet: e.CPUSet, MemoryLimitMiB: e.MemoryMiB, CgroupPath: e.CgroupPath,
		CgroupVersion: e.Version, QuotaCores: e.Cores, CFSQuotaUS: e.QuotaUS, CFSPeriodUS: e.PeriodUS,
		AncestorQuotaCores: e.AncestorCores, AncestorQuotaCgroup: e.AncestorCPUPath, CPUSetSize: e.CPUSetSize,
		MemoryLimitBytes: e.MemoryBytes, MemoryCgroupPath: e.MemoryCgroupPath,
		AncestorMemoryLimitBytes: e.AncestorMemoryBytes, AncestorMemoryCgroup: e.AncestorMemoryPath,
	}
}

// taskPID finds one process of a task: the container's init for docker, or
// the lowest process in the task's own cgroup for the other drivers.
func taskPID(ctx context.Context, p orchestrator.Placement) (int, string, error) {
	if p.Driver == "docker" {
		name := p.Task + "-" + p.AllocID
		out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Pid}} {{.Image}}", name).Output()
		if err != nil {
			return 0, "", fmt.Errorf("docker inspect %s: %w", name, err)
		}
		f := strings.Fields(string(out))
		if len(f) != 2 {
			return 0, "", fmt.Errorf("docker inspect %s: unexpected %q", name, out)
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid == 0 {
			return 0, "", fmt.Errorf("docker inspect %s: container not running", name)
		}
		return pid, f[1], nil
	}
	pid, err := execTaskPID(p.AllocID, p.Task)
	return pid, "", err
}

// execTaskPID finds a process of an exec task by its cgroup's name, which
// Nomad 1.10 makes "<allocID>.<task>" on cgroup v1 (under its cgroup parent,
// /nomad by default) and "<allocID>.<task>.scope" on v2 (under
// nomad.slice/{reserve,share}.slice). The whole last path component must
// match: a substring would take task "web" for "web-cache". On v1 the cpu
// controller's path is the one Nomad names; the cpuset one may be the shared
// partition.
func execTaskPID(allocID, task string) (int, error) {
	procs, err := limits.Processes()
	if err != nil {
		return 0, err
	}
	scope := allocID + "." + task
	for _, m := range procs { // lowest PID first: the task's own process before its children
		if m.Unified() && path.Base(m.Paths[""]) == scope+".scope" {
			return m.PID, nil
		}
		if cpu, ok := m.Paths["cpu"]; ok && !m.Unified() && path.Base(cpu) == scope {
			return m.PID, nil
		}
	}
	return 0, fmt.Errorf("no process of task %s in alloc %s found on this machine (no cgroup named %s or %s.scope)", task, orchestrator.ShortID(allocID), scope, scope)
}
