package nomad

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// Instances lists every task of the current allocations with what the pack
// declared for it; prestart and poststart hooks have finished and are left out.
func (a *Orchestrator) Instances(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Instance, error) {
	job, _, err := a.Client.Jobs().Info(d.Job, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: job %s: %w", d.Job, err)
	}
	mhz, err := a.mhz(ctx)
	if err != nil {
		return nil, err
	}
	allocs, err := a.currentAllocs(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Instance
	for _, s := range allocs {
		group := findGroup(job, s.TaskGroup)
		if group == nil || s.ClientStatus != "running" {
			continue
		}
		for _, t := range group.Tasks {
			if t.Lifecycle != nil && !t.Lifecycle.Sidecar {
				continue
			}
			decl, err := contract.ParseTask(job, group, t, mhz)
			if err != nil {
				return nil, fmt.Errorf("nomad: %w", err)
			}
			in := orchestrator.Instance{ID: s.ID, Group: s.TaskGroup, Task: t.Name, Node: s.NodeName, Driver: t.Driver, Declared: decl}
			if ts := s.TaskStates[t.Name]; ts != nil {
				in.Restarts = int(ts.Restarts)
			}
			if img, ok := t.Config["image"].(string); ok {
				in.Image = img
			}
			out = append(out, in)
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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Limits reads every task's cgroup on its node, through the node's probe
// (a.Nodes), which also finds the task's process: a docker task's container
// is known only to its own node's Docker daemon.
func (a *Orchestrator) Limits(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Limits, error) {
	instances, err := a.Instances(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Limits
	for _, p := range instances {
		e, imageID, err := taskLimits(ctx, a.Nodes.Node(p.Node), p)
		if err != nil {
			return nil, err
		}
		p.ImageID = imageID
		out = append(out, orchestrator.LimitsOf(p, e))
	}
	return out, nil
}

// rootCgroupRetries and rootCgroupPause bound how long a task's process may
// read as the root cgroup before the gate is told so.
var (
	rootCgroupRetries = 3
	rootCgroupPause   = 500 * time.Millisecond
)

// taskLimits reads the cgroup limits of a task's process. A process that
// reads as the root cgroup is looked up and read again, a few times: on
// cgroup v1 a process that is exiting moves to the root, so a task whose
// container init was being replaced at that moment read as uncapped once
// (PostgreSQL of study 001, "no memory limit (cgroup /)"). A task that
// stays in the root is returned as read, for the limits gate to refuse.
func taskLimits(ctx context.Context, node nodeprobe.Node, p orchestrator.Instance) (limits.Enforced, string, error) {
	for try := 0; ; try++ {
		pid, imageID, err := taskPID(ctx, node, p)
		if err != nil {
			return limits.Enforced{}, "", err
		}
		e, err := node.Limits(ctx, pid)
		if err != nil {
			return e, "", fmt.Errorf("limits of task %s/%s in alloc %s: %w", p.Group, p.Task, orchestrator.ShortID(p.ID), err)
		}
		inRoot := e.CgroupPath == "/" || e.MemoryCgroupPath == "/"
		if !inRoot || try >= rootCgroupRetries {
			return e, imageID, nil
		}
		select {
		case <-ctx.Done():
			return e, imageID, nil
		case <-time.After(rootCgroupPause):
		}
	}
}

// taskPID finds one process of a task on its node: the container's init
// for docker (with the container's image), or the lowest process in the
// task's own cgroup for the other drivers.
func taskPID(ctx context.Context, node nodeprobe.Node, p orchestrator.Instance) (int, string, error) {
	if p.Driver == "docker" {
		tp, err := node.NomadTaskProcess(ctx, p.ID, p.Task)
		if err != nil {
			return 0, "", fmt.Errorf("task %s of alloc %s: %w", p.Task, orchestrator.ShortID(p.ID), err)
		}
		return tp.PID, tp.ImageID, nil
	}
	pid, err := execTaskPID(ctx, node, p.ID, p.Task)
	return pid, "", err
}

// execTaskPID finds a process of an exec task by its cgroup's name, which
// Nomad 1.10 makes "<allocID>.<task>" on cgroup v1 (under its cgroup parent,
// /nomad by default) and "<allocID>.<task>.scope" on v2 (under
// nomad.slice/{reserve,share}.slice). The whole last path component must
// match: a substring would take task "web" for "web-cache". On v1 the cpu
// controller's path is the one Nomad names; the cpuset one may be the shared
// partition.
func execTaskPID(ctx context.Context, node nodeprobe.Node, allocID, task string) (int, error) {
	procs, err := node.Processes(ctx)
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
	return 0, fmt.Errorf("no process of task %s in alloc %s found on node %s (no cgroup named %s or %s.scope)", task, orchestrator.ShortID(allocID), node.Name(), scope, scope)
}
