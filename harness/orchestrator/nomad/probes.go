package nomad

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

var _ orchestrator.ProbeFinder = (*Orchestrator)(nil)

// NodeProbes finds the probes the node-probe system job runs: each running
// allocation's node name, and the address its "probe" port was given on
// that node, which is where the probe listens.
func (a *Orchestrator) NodeProbes(ctx context.Context) (map[string]*nodeprobe.Client, error) {
	return NodeProbes(ctx, a.Client)
}

// NodeProbes is Orchestrator.NodeProbes for any Nomad client.
func NodeProbes(ctx context.Context, c *api.Client) (map[string]*nodeprobe.Client, error) {
	job := orchestrator.NodeProbeJob
	if _, _, err := c.Jobs().Info(job, qo(ctx)); err != nil {
		if IsNotFound(err) {
			return nil, fmt.Errorf("nomad: job %s: %w", job, orchestrator.ErrNoNodeProbes)
		}
		return nil, fmt.Errorf("nomad: job %s: %w", job, err)
	}
	stubs, _, err := c.Jobs().Allocations(job, false, qo(ctx))
	if err != nil {
		return nil, fmt.Errorf("nomad: allocations of %s: %w", job, err)
	}
	out := map[string]*nodeprobe.Client{}
	for _, s := range stubs {
		if s.ClientStatus != api.AllocClientStatusRunning || s.DesiredStatus != api.AllocDesiredStatusRun {
			continue
		}
		alloc, _, err := c.Allocations().Info(s.ID, qo(ctx))
		if err != nil {
			return nil, fmt.Errorf("nomad: allocation %s of %s: %w", orchestrator.ShortID(s.ID), job, err)
		}
		addr, err := probeAddr(alloc)
		if err != nil {
			return nil, fmt.Errorf("nomad: %s on node %s: %w", job, s.NodeName, err)
		}
		out[s.NodeName] = nodeprobe.NewClient(s.NodeName, addr)
	}
	return out, nil
}

// probeAddr is where the allocation's probe port is on its node.
func probeAddr(alloc *api.Allocation) (string, error) {
	if alloc.AllocatedResources != nil {
		for _, p := range alloc.AllocatedResources.Shared.Ports {
			if p.Label == orchestrator.NodeProbePortLabel {
				return net.JoinHostPort(p.HostIP, strconv.Itoa(p.Value)), nil
			}
		}
	}
	return "", fmt.Errorf("allocation %s has no port %q", orchestrator.ShortID(alloc.ID), orchestrator.NodeProbePortLabel)
}
