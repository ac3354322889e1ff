package swarm

import (
	"context"

	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// checkRequest is the service's check, to run against one container.
func checkRequest(c *translate.Check, containerID string) nodeprobe.CheckRequest {
	return nodeprobe.CheckRequest{ContainerID: containerID, Type: c.Type, Address: c.Address, Path: c.Path, Timeout: c.Timeout}
}

// probe runs a check from inside the network namespace of process pid of
// this machine: what a node's probe does for a container of its node.
func probe(ctx context.Context, c *translate.Check, pid int) error {
	return nodeprobe.RunCheck(ctx, netns.OfProcess(pid), checkRequest(c, ""))
}
