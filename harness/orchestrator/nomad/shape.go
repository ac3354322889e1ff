package nomad

import (
	"context"
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

var (
	_ orchestrator.ControlPlaneShape = (*Orchestrator)(nil)
	_ orchestrator.FailureDetection  = (*Orchestrator)(nil)
)

// ControlPlaneServers counts the raft peers (/v1/status/peers).
func (a *Orchestrator) ControlPlaneServers(ctx context.Context) (int, error) {
	peers, err := a.Client.Status().Peers()
	if err != nil {
		return 0, fmt.Errorf("nomad: raft peers: %w", err)
	}
	return len(peers), nil
}

// failureDetectionKeys are the server settings that decide when a client
// that stopped heartbeating is marked down and its allocations replaced,
// as /v1/agent/self names them.
var failureDetectionKeys = []struct{ api, name string }{
	{"HeartbeatGrace", "heartbeat_grace"},
	{"MinHeartbeatTTL", "min_heartbeat_ttl"},
	{"MaxHeartbeatsPerSecond", "max_heartbeats_per_second"},
	{"FailoverHeartbeatTTL", "failover_heartbeat_ttl"},
}

// FailureDetection reads the heartbeat settings of the agent the adapter
// talks to (a server: clients do not hold them).
func (a *Orchestrator) FailureDetection(ctx context.Context) (map[string]string, error) {
	self, err := a.Client.Agent().Self()
	if err != nil {
		return nil, fmt.Errorf("nomad: agent self: %w", err)
	}
	server, _ := self.Config["Server"].(map[string]any)
	if server == nil {
		return nil, fmt.Errorf("nomad: the agent at %s is not a server: its heartbeat settings are not its own", a.Client.Address())
	}
	out := map[string]string{}
	for _, k := range failureDetectionKeys {
		switch v := server[k.api].(type) {
		case float64:
			if k.name == "max_heartbeats_per_second" {
				out[k.name] = fmt.Sprint(v)
			} else {
				// durations come as nanoseconds
				out[k.name] = time.Duration(v).String()
			}
		case string:
			out[k.name] = v
		}
	}
	return out, nil
}
