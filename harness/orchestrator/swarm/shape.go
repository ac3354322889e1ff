package swarm

import (
	"context"
	"fmt"

	"github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

var _ orchestrator.ControlPlaneShape = (*Orchestrator)(nil)

// ControlPlaneServers counts the swarm's managers, as the daemon the
// adapter talks to sees them.
func (o *Orchestrator) ControlPlaneServers(ctx context.Context) (int, error) {
	info, err := o.Engine.Client.Info(ctx, client.InfoOptions{})
	if err != nil {
		return 0, fmt.Errorf("swarm: docker info: %w", err)
	}
	return info.Info.Swarm.Managers, nil
}
