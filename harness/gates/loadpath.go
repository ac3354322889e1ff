package gates

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// Acceptor is what the sweep saw accepting connections at a registered
// loopback address, after the load, while the instances still ran: it
// opens one connection of its own there and asks the kernel which process
// took it.
type Acceptor struct {
	// Unanswered: nothing took the connection any more (an instance a
	// fault replaced), so what accepted during the load cannot be seen.
	Unanswered bool
	// Away names the node the step's own fault took away (killed, cut
	// off), where nothing could be asked: what accepted there is unseen.
	Away string
	// Err is why the accepting process could not be seen.
	Err error
	// Found is false when no process on this machine accepts: the kernel
	// carries the connection on into the instance's namespace, as a NAT
	// rule does.
	Found   bool
	PID     int
	Command string
	// Cgroup is the accepting process's CPU cgroup, CgroupErr why it could
	// not be read.
	Cgroup    string
	CgroupErr error
}

// OnLoopback reports whether addr (host:port) is on this machine's
// loopback, where the sweep can see which process accepts connections.
// Addresses off loopback are in namespaces whose sockets cannot be seen.
func OnLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// LoadPathGate checks, from the generator's own sockets, that every
// connection went to a registered instance of the measured service, and,
// for the ones on this machine's loopback, that what accepts them is the
// instance itself: a process of an instance's cgroup, or no process here
// (the kernel carries the connection into the instance's namespace, as a
// NAT rule does). A process outside every instance (docker's userland
// proxy, an SSH tunnel, a forwarder) accepting at the registered address
// relays the load, and the step did not measure what it declared.
// acceptors are what was seen accepting at the registered loopback
// addresses, by address (an address without one is off loopback and
// passes); instanceCgroups are the CPU cgroups of the deployment's
// instances.
func LoadPathGate(peers []loadgen.Peer, eps []orchestrator.Endpoint, acceptors map[string]Acceptor, instanceCgroups map[string]bool) results.Gate {
	g := results.Gate{Name: LoadPath}
	if len(peers) == 0 {
		g.NotChecked = true
		g.Detail = "no connection was established, so the path could not be seen"
		return g
	}
	registered := map[string]string{}
	for _, ep := range eps {
		registered[ep.HostPort()] = ep.Service
	}
	var direct, stray, relayed, unchecked []string
	for _, p := range peers {
		svc, ok := registered[p.Addr]
		if !ok {
			stray = append(stray, fmt.Sprintf("%s (%d connections)", p.Addr, p.Connections))
			continue
		}
		var problem, note string
		if a, seen := acceptors[p.Addr]; seen {
			problem, note = relay(p.Addr, a, instanceCgroups)
		}
		if problem != "" {
			relayed = append(relayed, problem)
			continue
		}
		if note != "" {
			unchecked = append(unchecked, note)
		}
		direct = append(direct, fmt.Sprintf("%s (%s, %d connections)", p.Addr, svc, p.Connections))
	}
	switch {
	case len(stray) > 0:
		known := make([]string, 0, len(registered))
		for addr := range registered {
			known = append(known, addr)
		}
		sort.Strings(known)
		g.Detail = fmt.Sprintf("connections reached %s, which is not a registered instance (registered: %s): a proxy or tunnel in the path?",
			strings.Join(stray, ", "), strings.Join(known, ", "))
	case len(relayed) > 0:
		g.Detail = strings.Join(relayed, "; ")
	default:
		g.Passed = true
		g.Detail = "every connection went straight to an instance: " + strings.Join(direct, ", ")
		if len(unchecked) > 0 {
			g.Detail += " (" + strings.Join(unchecked, "; ") + ")"
		}
	}
	return g
}

// relay says which process outside the instances accepts connections to a
// loopback address, or "" when an instance does (or the kernel carries them
// on into the instance's namespace). An address nothing answers on any more
// cannot be looked at: unchecked says so, and the address passes.
func relay(addr string, a Acceptor, instanceCgroups map[string]bool) (problem, unchecked string) {
	switch {
	case a.Unanswered:
		return "", fmt.Sprintf("%s did not answer after the load, so what accepts there was not seen", addr)
	case a.Away != "":
		return "", fmt.Sprintf("%s is on node %s, which the step's fault took away, so what accepts there was not seen", addr, a.Away)
	case a.Err != nil:
		return fmt.Sprintf("who accepts the connections to %s could not be seen: %v", addr, a.Err), ""
	case !a.Found:
		return "", ""
	case a.CgroupErr != nil:
		return fmt.Sprintf("connections to %s are accepted by %s (pid %d), whose cgroup could not be read: %v", addr, a.Command, a.PID, a.CgroupErr), ""
	case instanceCgroups[a.Cgroup]:
		return "", ""
	}
	return fmt.Sprintf("connections to %s are accepted by %s (pid %d, cgroup %s), a process of no instance: a userland proxy relays the load", addr, a.Command, a.PID, a.Cgroup), ""
}
