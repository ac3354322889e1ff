package nodes

import (
	"context"
	"fmt"
	"os"
	"time"
)

// SingleNode is the embedded cluster: one machine that runs every control
// plane, every application and the harness. A node fault there would stop
// the whole cluster (and the harness's own access to it) rather than
// measure the loss of one node among several, so every fault is refused.
type SingleNode struct{}

// Describe names the cluster.
func (SingleNode) Describe() string { return "the embedded single-node cluster" }

// ErrSingleNode is what every fault on the embedded cluster returns.
var ErrSingleNode = fmt.Errorf("the embedded single-node cluster has one node, which holds every control plane, every task and the harness: " +
	"losing it measures nothing about losing one node of several; bring up an emulated cluster (just nodes-up nodes=4 servers=3) and run with NODES_NAME set to its name")

func (SingleNode) refuse(what string) error { return fmt.Errorf("%s: %w", what, ErrSingleNode) }

// Nodes is the one node, which has no address of its own on a cluster network.
func (SingleNode) Nodes(context.Context) ([]Node, error) {
	host, _ := os.Hostname()
	return []Node{{Name: host, Role: RoleServer, Address: "127.0.0.1", Running: true}}, nil
}

func (s SingleNode) Kill(_ context.Context, node string) error {
	return s.refuse("kill node " + node)
}

func (s SingleNode) Revive(_ context.Context, node string) error {
	return s.refuse("revive node " + node)
}

func (s SingleNode) Partition(_ context.Context, node string, _ time.Duration) (<-chan error, error) {
	return nil, s.refuse("partition node " + node)
}

func (s SingleNode) RestartAgent(_ context.Context, node string, a Agent) error {
	return s.refuse(fmt.Sprintf("restart %s on node %s", a, node))
}

// Leader is the one node: it holds every leadership there is.
func (s SingleNode) Leader(ctx context.Context, _ ControlPlane) (Node, error) {
	all, _ := s.Nodes(ctx)
	return all[0], nil
}

// FromEnv is the cluster the harness runs against: the emulated cluster
// named by NODES_NAME (the variable cluster/nodes.sh reads), or the
// embedded single node when it is unset.
func FromEnv() (Controller, error) {
	name := os.Getenv("NODES_NAME")
	if name == "" {
		return SingleNode{}, nil
	}
	return NewEmulated(name)
}
