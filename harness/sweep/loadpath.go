package sweep

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// loadPathGate looks at what accepts connections at every registered
// loopback address the generator reached, and has the load-path gate judge
// the generator's peers by it. instanceCgroups are the CPU cgroups of the
// deployment's instances; nodes reads the node each address was registered on.
func loadPathGate(ctx context.Context, peers []loadgen.Peer, eps []orchestrator.Endpoint, instanceCgroups map[string]bool, nodes nodeprobe.Resolver, away *awayNodes) results.Gate {
	return gates.LoadPathGate(peers, eps, acceptors(ctx, peers, eps, nodes, away), instanceCgroups)
}

// acceptors sees, once for each registered address a peer is at, which
// process accepts connections there. Without node probes (nodes nil: the
// embedded cluster, read here) only loopback addresses are looked at: one
// off loopback is in a namespace whose sockets cannot be seen from here.
// With probes, each address is looked at by its endpoint's node, which
// reaches its own addresses and sees its own sockets. An address no
// instance registered is refused by the gate whoever accepts at it. An
// address on a node the step's fault took away that cannot be looked at is
// marked so (Away), not taken for a failed look.
func acceptors(ctx context.Context, peers []loadgen.Peer, eps []orchestrator.Endpoint, nodes nodeprobe.Resolver, away *awayNodes) map[string]gates.Acceptor {
	registered := map[string]orchestrator.Endpoint{}
	for _, ep := range eps {
		registered[ep.HostPort()] = ep
	}
	out := map[string]gates.Acceptor{}
	for _, p := range peers {
		ep, ok := registered[p.Addr]
		if _, seen := out[p.Addr]; seen || !ok || (nodes == nil && !gates.OnLoopback(p.Addr)) {
			continue
		}
		a := acceptorAt(ctx, nodes.Node(ep.Node), ep.NodeNetNS(), p.Addr)
		if a.Err != nil && away.has(ep.Node) {
			a = gates.Acceptor{Away: ep.Node}
		}
		out[p.Addr] = a
	}
	return out
}

// acceptorAt has node open one connection of its own to addr, after the
// load, while the instances still run, and reads which process took it.
func acceptorAt(ctx context.Context, node nodeprobe.Node, ns netns.Path, addr string) gates.Acceptor {
	a, found, err := node.AcceptorOf(ctx, ns, addr, 2*time.Second)
	var dialErr *net.OpError
	switch {
	case errors.As(err, &dialErr) && dialErr.Op == "dial":
		return gates.Acceptor{Unanswered: true}
	case err != nil:
		return gates.Acceptor{Err: err}
	case !found:
		return gates.Acceptor{}
	}
	seen := gates.Acceptor{Found: true, PID: a.PID, Command: a.Command}
	seen.Cgroup, seen.CgroupErr = node.CPUCgroupOf(ctx, a.PID)
	return seen
}
