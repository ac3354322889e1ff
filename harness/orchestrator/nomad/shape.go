package nomad

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/hashicorp/nomad/api"

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
// The agent reports 0 for a setting its configuration leaves out: the
// server then runs Nomad's default (nomad/config.go), recorded as such.
var failureDetectionKeys = []struct{ api, name, fallback string }{
	{"HeartbeatGrace", "heartbeat_grace", "10s"},
	{"MinHeartbeatTTL", "min_heartbeat_ttl", "10s"},
	{"MaxHeartbeatsPerSecond", "max_heartbeats_per_second", "50"},
	{"FailoverHeartbeatTTL", "failover_heartbeat_ttl", "5m0s"},
}

// FailureDetection reads the heartbeat settings of a server: of the agent
// the adapter talks to when it is one, else of the first server that agent
// knows, asked on the same HTTP port (a client agent's own settings are
// zeros: it does not decide when a node is down).
func (a *Orchestrator) FailureDetection(ctx context.Context) (map[string]string, error) {
	self, err := a.Client.Agent().Self()
	if err != nil {
		return nil, fmt.Errorf("nomad: agent self: %w", err)
	}
	server, _ := self.Config["Server"].(map[string]any)
	if enabled, _ := server["Enabled"].(bool); !enabled {
		servers, err := a.Client.Agent().Servers()
		if err != nil || len(servers) == 0 {
			return nil, fmt.Errorf("nomad: the agent at %s is a client and names no server (%v)", a.Client.Address(), err)
		}
		addr, err := serverHTTP(a.Client.Address(), servers[0])
		if err != nil {
			return nil, err
		}
		c, err := api.NewClient(&api.Config{Address: addr})
		if err != nil {
			return nil, err
		}
		if self, err = c.Agent().Self(); err != nil {
			return nil, fmt.Errorf("nomad: server %s: agent self: %w", addr, err)
		}
		server, _ = self.Config["Server"].(map[string]any)
	}
	out := map[string]string{}
	for _, k := range failureDetectionKeys {
		switch v := server[k.api].(type) {
		case float64:
			switch {
			case v == 0:
				out[k.name] = k.fallback + " (Nomad's default)"
			case k.name == "max_heartbeats_per_second":
				out[k.name] = fmt.Sprint(v)
			default:
				// durations come as nanoseconds
				out[k.name] = time.Duration(v).String()
			}
		case string:
			out[k.name] = v
		default:
			out[k.name] = k.fallback + " (Nomad's default)"
		}
	}
	return out, nil
}

// serverHTTP is the HTTP address of the server whose RPC address a client
// agent gave (host:4647), on the port the adapter's own agent serves.
func serverHTTP(agentAddr, rpc string) (string, error) {
	u, err := url.Parse(agentAddr)
	if err != nil {
		return "", fmt.Errorf("nomad: agent address %q: %w", agentAddr, err)
	}
	host, _, err := net.SplitHostPort(rpc)
	if err != nil {
		return "", fmt.Errorf("nomad: server address %q: %w", rpc, err)
	}
	port := u.Port()
	if port == "" {
		port = "4646"
	}
	u.Host = net.JoinHostPort(host, port)
	return u.String(), nil
}
