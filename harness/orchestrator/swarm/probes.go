package swarm

import (
	"context"
	"fmt"
	"net"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

var _ orchestrator.ProbeFinder = (*Orchestrator)(nil)

// ProbePortLabel is the node-probe service's label that says the port its
// tasks listen on, on their node's address (host network: this kernel has
// no IPVS for a routing mesh, and a probe must be reached on its own node).
const ProbePortLabel = "orchbench.node-probe.port"

// NodeProbes finds the probes the node-probe global service runs: each
// running task's node hostname, at that node's address.
func (o *Orchestrator) NodeProbes(ctx context.Context) (map[string]*nodeprobe.Client, error) {
	return o.Engine.NodeProbes(ctx)
}

// NodeProbes is Orchestrator.NodeProbes.
func (a *Engine) NodeProbes(ctx context.Context) (map[string]*nodeprobe.Client, error) {
	name := orchestrator.NodeProbeJob
	res, err := a.Client.ServiceInspect(ctx, name, client.ServiceInspectOptions{})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("swarm: service %s: %w", name, orchestrator.ErrNoNodeProbes)
		}
		return nil, fmt.Errorf("swarm: service %s: %w", name, err)
	}
	port := nodeprobe.DefaultPort
	if s, ok := res.Service.Spec.Labels[ProbePortLabel]; ok {
		if port, err = strconv.Atoi(s); err != nil || port <= 0 || port > 65535 {
			return nil, fmt.Errorf("swarm: service %s: label %s=%q is not a port", name, ProbePortLabel, s)
		}
	}
	nodes, err := a.NodeList(ctx)
	if err != nil {
		return nil, err
	}
	tasks, err := a.serviceTasks(ctx, res.Service.ID)
	if err != nil {
		return nil, err
	}
	out := map[string]*nodeprobe.Client{}
	for _, t := range tasks {
		if t.Status.State != swarm.TaskStateRunning || t.DesiredState != swarm.TaskStateRunning {
			continue
		}
		n, ok := nodes[t.NodeID]
		if !ok || n.Status.Addr == "" {
			return nil, fmt.Errorf("swarm: service %s: task %s is on node %s, whose address the swarm does not know", name, shortID(t.ID), shortID(t.NodeID))
		}
		host := n.Description.Hostname
		out[host] = nodeprobe.NewClient(host, net.JoinHostPort(n.Status.Addr, strconv.Itoa(port)))
	}
	return out, nil
}

// NodeList gives the swarm's nodes by ID.
func (a *Engine) NodeList(ctx context.Context) (map[string]swarm.Node, error) {
	res, err := a.Client.NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		return nil, fmt.Errorf("swarm: list nodes: %w", err)
	}
	out := map[string]swarm.Node{}
	for _, n := range res.Items {
		out[n.ID] = n
	}
	return out, nil
}
