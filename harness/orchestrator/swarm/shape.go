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
	var managers []string
	for _, p := range info.Info.Swarm.RemoteManagers {
		managers = append(managers, p.Addr)
	}
	o.Engine.managers.noteManagers(managers)
	return info.Info.Swarm.Managers, nil
}

var _ orchestrator.APIEndpoint = (*Orchestrator)(nil)

// APIEndpoint names the manager the harness talks to when it has no other
// to fail over to (one manager, or none other known yet): a fault that
// takes that manager takes the harness's Swarm API with it. With other
// managers known it names none, since the client moves to one of them.
func (o *Orchestrator) APIEndpoint() (string, string) {
	if o.Engine.managers.canFailOver() {
		return "", ""
	}
	return "DOCKER_HOST", o.Engine.Client.DaemonHost()
}
