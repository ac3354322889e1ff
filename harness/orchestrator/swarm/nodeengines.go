package swarm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
)

// enginePingTimeout bounds the first look at a node's engine, so that an
// unreachable node is named quickly instead of hanging a deploy.
const enginePingTimeout = 5 * time.Second

// NodeEngine is the Docker engine of one swarm node: a task's container
// exists only there, so its inspect, logs, events and signals come from it.
type NodeEngine struct {
	NodeID string
	// Name is the node's hostname, as the Swarm API and the results call it.
	Name string
	// Host is the engine's address (a DOCKER_HOST value).
	Host   string
	Client *client.Client
}

// NodeEngines resolves a swarm node to its engine, from the manager's node
// list (Status.Addr, the address the node joined the swarm with) and the
// manager's own scheme and port: every node's dockerd listens the way the
// manager's does (cluster/nodes.sh listens on ADDR:2375 on every node). The
// manager's own node is the manager's client: on the single-node swarm that
// is the only engine, reached through the local socket as before. Its
// errors name the node and the address; the callers say what they did.
type NodeEngines struct {
	manager *client.Client
	// dial makes a client for a node's engine; tests replace it.
	dial func(host string) (*client.Client, error)

	mu      sync.Mutex
	self    string // the manager's node ID, once known
	engines map[string]*NodeEngine
}

// NewNodeEngines resolves nodes through the manager's client; the other
// nodes' clients take the manager's environment (DOCKER_TLS_VERIFY,
// DOCKER_CERT_PATH) with their own address.
func NewNodeEngines(manager *client.Client) *NodeEngines {
	return &NodeEngines{manager: manager, dial: func(host string) (*client.Client, error) {
		return client.New(client.FromEnv, client.WithHost(host))
	}}
}

// Manager is the engine whose Swarm API the adapter uses.
func (n *NodeEngines) Manager() *client.Client { return n.manager }

// For is the engine of the node with ID nodeID.
func (n *NodeEngines) For(ctx context.Context, nodeID string) (*NodeEngine, error) {
	if nodeID == "" {
		return nil, errors.New("a task without a node has no engine (not yet scheduled)")
	}
	n.mu.Lock()
	e, ok := n.engines[nodeID]
	n.mu.Unlock()
	if ok {
		return e, nil
	}
	nodes, err := n.manager.NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	for _, node := range nodes.Items {
		if node.ID == nodeID {
			return n.resolve(ctx, node)
		}
	}
	return nil, fmt.Errorf("node %s is not in the swarm's node list", shortID(nodeID))
}

// All is the engine of every ready node, by name; the first unreachable
// one is the error (a container listing that skipped a node would miss
// what runs there).
func (n *NodeEngines) All(ctx context.Context) ([]*NodeEngine, error) {
	nodes, err := n.manager.NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var out []*NodeEngine
	for _, node := range nodes.Items {
		if node.Status.State != swarm.NodeStateReady {
			continue
		}
		e, err := n.resolve(ctx, node)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (n *NodeEngines) resolve(ctx context.Context, node swarm.Node) (*NodeEngine, error) {
	n.mu.Lock()
	if e, ok := n.engines[node.ID]; ok {
		n.mu.Unlock()
		return e, nil
	}
	n.mu.Unlock()
	self, err := n.selfID(ctx)
	if err != nil {
		return nil, err
	}
	name := node.Description.Hostname
	e := &NodeEngine{NodeID: node.ID, Name: name}
	if node.ID == self {
		e.Host, e.Client = n.manager.DaemonHost(), n.manager
	} else {
		host, err := NodeEngineHost(n.manager.DaemonHost(), node.Status.Addr)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", name, err)
		}
		c, err := n.dial(host)
		if err != nil {
			return nil, fmt.Errorf("node %s: docker client for %s: %w", name, host, err)
		}
		pctx, cancel := context.WithTimeout(ctx, enginePingTimeout)
		_, err = c.Ping(pctx, client.PingOptions{})
		cancel()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("node %s: its engine at %s does not answer (its dockerd must listen on the node's swarm address as the manager's does on %s): %w", name, host, n.manager.DaemonHost(), err)
		}
		e.Host, e.Client = host, c
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.engines == nil {
		n.engines = map[string]*NodeEngine{}
	}
	if have, ok := n.engines[node.ID]; ok { // another caller resolved it meanwhile
		if e.Client != n.manager {
			e.Client.Close()
		}
		return have, nil
	}
	n.engines[node.ID] = e
	return e, nil
}

func (n *NodeEngines) selfID(ctx context.Context) (string, error) {
	n.mu.Lock()
	self := n.self
	n.mu.Unlock()
	if self != "" {
		return self, nil
	}
	info, err := n.manager.Info(ctx, client.InfoOptions{})
	if err != nil {
		return "", fmt.Errorf("docker info of the manager: %w", err)
	}
	n.mu.Lock()
	n.self = info.Info.Swarm.NodeID
	n.mu.Unlock()
	return info.Info.Swarm.NodeID, nil
}

// Close closes the clients of the nodes other than the manager's.
func (n *NodeEngines) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, e := range n.engines {
		if e.Client != n.manager {
			e.Client.Close()
		}
		delete(n.engines, id)
	}
}

// NodeEngineHost is the engine address of a node that joined the swarm
// with address nodeAddr, reached the way the manager is (managerHost, its
// DOCKER_HOST): the same scheme and port. A manager behind a local socket
// says nothing about how other nodes listen, so that is an error naming
// what to set.
func NodeEngineHost(managerHost, nodeAddr string) (string, error) {
	u, err := url.Parse(managerHost)
	if err != nil {
		return "", fmt.Errorf("the manager's address %q: %w", managerHost, err)
	}
	if u.Scheme != "tcp" && u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("its engine is not this machine's and the manager is reached through %s: set DOCKER_HOST=tcp://MANAGER:PORT, where every node's dockerd listens on its own swarm address (cluster/nodes.sh env)", managerHost)
	}
	if nodeAddr == "" || net.ParseIP(nodeAddr) == nil {
		return "", fmt.Errorf("the swarm gives no address for it (Status.Addr %q)", nodeAddr)
	}
	port := u.Port()
	if port == "" {
		port = "2375"
		if u.Scheme == "https" {
			port = "2376"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(nodeAddr, port), nil
}
