package nomad

import (
	"context"
	"fmt"
	"path"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
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
		node := a.Nodes.Node(p.Node)
		pid, imageID, err := taskPID(ctx, node, p)
		if err != nil {
			return nil, err
		}
		e, err := node.Limits(ctx, pid)
		if err != nil {
			return nil, fmt.Errorf("limits of task %s/%s in alloc %s: %w", p.Group, p.Task, orchestrator.ShortID(p.ID), err)
		}
		p.ImageID = imageID
		out = append(out, orchestrator.LimitsOf(p, e))
	}
	return out, nil
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
