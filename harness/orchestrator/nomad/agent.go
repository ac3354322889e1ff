package nomad

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// AgentJob is the node agent's system job (jobs/agent.nomad.tpl).
const AgentJob = "orchbench-agent"

// NodeAgent is the cluster's log and metrics shipper, a system job on every
// client node. The sweep measures its cost in every step and stops it for
// steps declared with shipping off; it serves the steps of every
// orchestrator, since they share the node.
type NodeAgent struct {
	Client *api.Client
	// Job is the agent's job ID; AgentJob when empty.
	Job string
	// Nodes reads the kernel of the node a task runs on; nil reads this machine.
	Nodes nodeprobe.Resolver
}

func (n *NodeAgent) job() string {
	if n.Job == "" {
		return AgentJob
	}
	return n.Job
}

// Name is the agent's job ID, as steps record it.
func (n *NodeAgent) Name() string { return n.job() }

// Tasks reads the cgroups of the agent's running tasks, each on its node;
// none when the agent is stopped or not deployed.
func (n *NodeAgent) Tasks(ctx context.Context) ([]orchestrator.Limits, error) {
	allocs, _, err := n.Client.Jobs().Allocations(n.job(), false, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: allocations of %s: %w", n.job(), err)
	}
	var out []orchestrator.Limits
	for _, a := range allocs {
		if a.ClientStatus != api.AllocClientStatusRunning {
			continue
		}
		for task, st := range a.TaskStates {
			if st.State != "running" {
				continue
			}
			node := n.Nodes.Node(a.NodeName)
			pid, err := execTaskPID(ctx, node, a.ID, task)
			if err != nil {
				return nil, fmt.Errorf("node agent: %w", err)
			}
			e, err := node.Limits(ctx, pid)
			if err != nil {
				return nil, fmt.Errorf("node agent: limits of task %s in alloc %s: %w", task, orchestrator.ShortID(a.ID), err)
			}
			in := orchestrator.Instance{ID: a.ID, Group: a.TaskGroup, Task: task, Node: a.NodeName, Driver: "raw_exec"}
			out = append(out, orchestrator.LimitsOf(in, e))
		}
	}
	return out, nil
}

// Deployed says whether the agent's job exists (running or stopped).
func (n *NodeAgent) Deployed(ctx context.Context) (bool, error) {
	_, _, err := n.Client.Jobs().Info(n.job(), qo(ctx))
	if err == nil {
		return true, nil
	}
	if IsNotFound(err) {
		return false, nil
	}
	return false, fmt.Errorf("nomad: job %s: %w", n.job(), err)
}

// Pause stops the agent without purging its job, so Resume can run the same
// version again; it returns once every allocation has stopped. The agent's
// read offsets are on disk: what tasks log meanwhile is shipped on resume.
func (n *NodeAgent) Pause(ctx context.Context) error {
	allocs, _, err := n.Client.Jobs().Allocations(n.job(), false, qo(ctx))
	if err != nil {
		return fmt.Errorf("nomad: allocations of %s: %w", n.job(), err)
	}
	if _, _, err := n.Client.Jobs().Deregister(n.job(), false, wo(ctx)); err != nil {
		return fmt.Errorf("nomad: stop %s: %w", n.job(), err)
	}
	return waitStopped(ctx, n.Client, n.job(), allocs, stopBound)
}

// Resume registers the stopped agent job again and waits, up to bound, until
// an allocation of it runs.
func (n *NodeAgent) Resume(ctx context.Context, bound time.Duration) error {
	job, _, err := n.Client.Jobs().Info(n.job(), qo(ctx))
	if err != nil {
		return fmt.Errorf("nomad: job %s: %w", n.job(), err)
	}
	if job.Stop != nil && *job.Stop {
		job.Stop = new(bool)
		if _, _, err := n.Client.Jobs().Register(job, wo(ctx)); err != nil {
			return fmt.Errorf("nomad: start %s again: %w", n.job(), err)
		}
	}
	deadline := time.Now().Add(bound)
	for {
		tasks, err := n.Tasks(ctx)
		if err == nil && len(tasks) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("no task of it running")
			}
			return fmt.Errorf("nomad: %s did not run again within %s: %w", n.job(), bound, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
