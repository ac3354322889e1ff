package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// apiTimeout bounds one question to one server: a dead or partitioned one
// must not hold the answer up, another server is asked instead.
const apiTimeout = 3 * time.Second

func (e *Emulated) httpGet(ctx context.Context, url string) ([]byte, error) {
	if e.HTTPGet != nil {
		return e.HTTPGet(ctx, url)
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// statusPort is where each raft-based control plane serves /v1/status/leader.
var statusPort = map[ControlPlane]int{PlaneNomad: 4646, PlaneConsul: 8500}

// Leader asks every running server in turn, the first that answers wins:
// Nomad's and Consul's /v1/status/leader (the leader's raft address), the
// Swarm managers' node list. A server that answers "no leader" is believed
// (a cluster without quorum); one that does not answer is skipped.
func (e *Emulated) Leader(ctx context.Context, cp ControlPlane) (Node, error) {
	all, err := e.Nodes(ctx)
	if err != nil {
		return Node{}, err
	}
	var tried []string
	for _, s := range WithRole(all, RoleServer) {
		if !s.Running {
			continue
		}
		var holder string
		var err error
		switch cp {
		case PlaneNomad, PlaneConsul:
			holder, err = e.raftLeader(ctx, cp, s)
		case PlaneSwarm:
			holder, err = e.swarmLeader(ctx, s)
		case PlaneEtcd:
			holder, err = e.etcdLeader(ctx, s)
		case PlaneKubeControllerManager:
			holder, err = e.leaseHolder(ctx, s, string(cp))
		default:
			return Node{}, fmt.Errorf("leader of %q: not a control plane the harness knows (known: %s)", cp, planeList())
		}
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", s.Name, err))
			continue
		}
		if holder == "" {
			return Node{}, fmt.Errorf("%s (asked %s): %w", cp, s.Name, ErrNoLeader)
		}
		n, ok := ByAddress(all, holder)
		if !ok {
			n, ok = ByName(all, holder)
		}
		if !ok {
			return Node{}, fmt.Errorf("%s: the leader %s is no node of %s", cp, holder, e.Describe())
		}
		return n, nil
	}
	if len(tried) == 0 {
		return Node{}, fmt.Errorf("%s: no server node is running: %w", cp, ErrNoLeader)
	}
	return Node{}, fmt.Errorf("%s: no server answered (%s): %w", cp, strings.Join(tried, "; "), ErrNoLeader)
}

// raftLeader is the leader's raft address as server s reports it, "" for none.
func (e *Emulated) raftLeader(ctx context.Context, cp ControlPlane, s Node) (string, error) {
	b, err := e.httpGet(ctx, fmt.Sprintf("http://%s:%d/v1/status/leader", s.Address, statusPort[cp]))
	if err != nil {
		return "", err
	}
	var addr string
	if err := json.Unmarshal(b, &addr); err != nil {
		return "", fmt.Errorf("leader: %q is not a JSON string", b)
	}
	return addr, nil
}

// swarmLeader is the hostname of the manager Swarm calls Leader, read
// through manager s's own API (its docker socket, reached inside the node
// as an operator on that host would); "" when the managers have none.
func (e *Emulated) swarmLeader(ctx context.Context, s Node) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*apiTimeout)
	defer cancel()
	out, err := e.docker(ctx, "exec", s.Name, "docker", "node", "ls", "--filter", "role=manager", "--format", "{{.Hostname}} {{.ManagerStatus}}")
	if err != nil {
		return "", err
	}
	return parseSwarmLeader(out)
}

func parseSwarmLeader(out string) (string, error) {
	if strings.TrimSpace(out) == "" {
		return "", errors.New("docker node ls listed no manager")
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[1] == "Leader" {
			return f[0], nil
		}
	}
	return "", nil
}
