// Package nodes is the harness's hold on a cluster's machines, below any
// orchestrator: which nodes there are, with their role and address, and the
// faults a machine can suffer (it dies, its network is cut, one of its agents
// restarts), plus which node holds each control plane's leadership.
//
// Controller is the seam. Emulated drives the project's dockerd, where every
// node is a container (cluster/nodes.sh); the real-hosts issue (25) is to
// implement the same interface over SSH (Kill: power off through the
// host's BMC or `systemctl poweroff --force`, Partition: the same iptables
// rules with their removal scheduled on the host before the cut, since the
// SSH session itself is cut, RestartAgent: `systemctl restart`). Nothing in
// the interface assumes containers. SingleNode is the embedded cluster's,
// which refuses every node fault with the reason.
package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/names"
)

// Role is what a node is for, as in study 002: servers hold the control
// planes and run no application, workers run the applications, the client
// runs the load.
type Role string

const (
	RoleServer Role = "server"
	RoleWorker Role = "worker"
	RoleClient Role = "client"
)

// ControlPlane is a system with a leader the harness can ask about.
type ControlPlane string

const (
	PlaneNomad  ControlPlane = "nomad"
	PlaneConsul ControlPlane = "consul"
	PlaneSwarm  ControlPlane = "swarm"
	// PlaneEtcd is Kubernetes' store: its raft leader's node.
	PlaneEtcd ControlPlane = "etcd"
	// PlaneKubeControllerManager is the node whose kube-controller-manager
	// holds its leader-election lease (the one that acts on lost nodes).
	PlaneKubeControllerManager ControlPlane = "kube-controller-manager"
)

// ControlPlanes are those Leader answers for.
var ControlPlanes = []ControlPlane{PlaneNomad, PlaneConsul, PlaneSwarm, PlaneEtcd, PlaneKubeControllerManager}

// Agent is a per-node daemon RestartAgent can restart.
type Agent string

const (
	AgentConsul Agent = "consul"
	AgentNomad  Agent = "nomad"
	// AgentKubelet runs on the workers (and the client) of a cluster
	// brought up with Kubernetes (nodes.sh up ... k8s=1).
	AgentKubelet Agent = "kubelet"
)

// Agents lists the names a spec may give.
var Agents = []Agent{AgentConsul, AgentNomad, AgentKubelet}

// ParseAgent reads an agent's name.
func ParseAgent(name string) (Agent, error) {
	a := Agent(name)
	if !slices.Contains(Agents, a) {
		return "", fmt.Errorf("unknown agent %q (known: %s)", name, AgentList())
	}
	return a, nil
}

// AgentList is "consul, nomad, kubelet", for messages.
func AgentList() string {
	return names.Join(Agents)
}

// Node is one machine of the cluster.
type Node struct {
	// Name is the node's own name (its hostname).
	Name    string `json:"name"`
	Role    Role   `json:"role"`
	Address string `json:"address"`
	// Names are what each orchestrator calls the node (Nomad's node name,
	// Consul's, the Swarm hostname) when that differs from Name.
	Names map[string]string `json:"names,omitempty"`
	// Running is false for a node that is down (killed, powered off).
	Running bool `json:"running"`
}

// NameIn is what the orchestrator or control plane calls the node.
func (n Node) NameIn(system string) string {
	if v, ok := n.Names[system]; ok {
		return v
	}
	return n.Name
}

// Controller acts on a cluster's machines. Every method names the node by
// Node.Name.
type Controller interface {
	// Describe names the cluster in messages ("emulated cluster fl").
	Describe() string
	// Nodes lists every node, running or not, servers first.
	Nodes(ctx context.Context) ([]Node, error)
	// Kill stops the node at once, everything on it with it: no agent
	// says goodbye, as when a machine loses power.
	Kill(ctx context.Context, node string) error
	// Revive starts a killed node again with its agents, from the state
	// they kept on disk, and returns once they run (not once the control
	// planes see them: that is the caller's to measure).
	Revive(ctx context.Context, node string) error
	// Partition drops every packet between the node and the rest of the
	// cluster (its agents' gossip and RPC, the overlay's VXLAN, the tasks'
	// traffic) for d, then restores it. It returns once the cut is in
	// place; restored is closed when the traffic flows again, with the
	// error if the restoration failed.
	Partition(ctx context.Context, node string, d time.Duration) (restored <-chan error, err error)
	// RestartAgent stops the agent on the node and starts it again.
	RestartAgent(ctx context.Context, node string, agent Agent) error
	// Leader is the node that holds the control plane's leadership now;
	// ErrNoLeader when none does (an election, a lost quorum, no server).
	Leader(ctx context.Context, cp ControlPlane) (Node, error)
}

// ErrNoLeader: the control plane has no leader now.
var ErrNoLeader = errors.New("no leader")

// ByName finds a node in a list.
func ByName(all []Node, name string) (Node, bool) {
	for _, n := range all {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// ByAddress finds the node holding an address ("10.79.0.11" or
// "10.79.0.11:4647").
func ByAddress(all []Node, addr string) (Node, bool) {
	host := addr
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		host = addr[:i]
	}
	for _, n := range all {
		if n.Address == host {
			return n, true
		}
	}
	return Node{}, false
}

// WithRole keeps the nodes of one role.
func WithRole(all []Node, r Role) []Node {
	var out []Node
	for _, n := range all {
		if n.Role == r {
			out = append(out, n)
		}
	}
	return out
}
