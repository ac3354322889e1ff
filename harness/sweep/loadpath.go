package sweep

import (
	"errors"
	"net"
	"time"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/sockets"
)

// loadPathGate looks at what accepts connections at every registered
// loopback address the generator reached, and has the load-path gate judge
// the generator's peers by it. instanceCgroups are the CPU cgroups of the
// deployment's instances.
func loadPathGate(peers []loadgen.Peer, eps []orchestrator.Endpoint, instanceCgroups map[string]bool) results.Gate {
	return gates.LoadPathGate(peers, eps, acceptors(peers, eps), instanceCgroups)
}

// acceptors sees, once for each registered loopback address a peer is at,
// which process accepts connections there. Addresses off loopback are in
// namespaces whose sockets cannot be seen from here, and an address no
// instance registered is refused by the gate whoever accepts at it.
func acceptors(peers []loadgen.Peer, eps []orchestrator.Endpoint) map[string]gates.Acceptor {
	inside := map[string]netns.Path{}
	for _, ep := range eps {
		inside[ep.HostPort()] = ep.NetNS
	}
	out := map[string]gates.Acceptor{}
	for _, p := range peers {
		ns, registered := inside[p.Addr]
		if _, seen := out[p.Addr]; seen || !registered || !gates.OnLoopback(p.Addr) {
			continue
		}
		out[p.Addr] = acceptorAt(ns, p.Addr)
	}
	return out
}

// acceptorAt opens one connection of its own to addr, after the load, while
// the instances still run, and reads which process took it.
func acceptorAt(ns netns.Path, addr string) gates.Acceptor {
	a, found, err := sockets.AcceptorOf(ns, addr, 2*time.Second)
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
	seen.Cgroup, seen.CgroupErr = limits.CPUCgroupOf(a.PID)
	return seen
}
