package nodeprobe

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/sockets"
)

// Probes resolves each node named in addrs to a Client of the probe at its
// address ("host:port" or a URL), made once. A node it does not name is
// never read from this machine instead: every read of it fails, saying
// which nodes have a probe.
func Probes(addrs map[string]string, timeout time.Duration) Resolver {
	clients := map[string]*Client{}
	for name, addr := range addrs {
		c := NewClient(name, addr)
		c.Timeout = timeout
		clients[name] = c
	}
	return FromClients(clients)
}

// FromClients resolves each node to its client (keyed by node name); like
// Probes, a node without one fails every read, naming the nodes that have.
func FromClients(clients map[string]*Client) Resolver {
	known := slices.Sorted(maps.Keys(clients))
	return func(name string) Node {
		if c, ok := clients[name]; ok {
			return c
		}
		return unknown{name: name, known: known}
	}
}

// ParseProbes reads "node=host:port" pairs, as flags give them.
func ParseProbes(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		name, addr, ok := strings.Cut(p, "=")
		if !ok || name == "" || addr == "" {
			return nil, fmt.Errorf("node probe %q is not NODE=HOST:PORT", p)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("node %s has two probes", name)
		}
		out[name] = addr
	}
	return out, nil
}

// unknown is a node no probe address was given for.
type unknown struct {
	name  string
	known []string
}

func (u unknown) Name() string { return u.name }

func (u unknown) err(op string) error {
	return fmt.Errorf("node %s: %s: no probe address is known for this node (known: %s)", u.name, op, strings.Join(u.known, ", "))
}

func (u unknown) Limits(_ context.Context, pid int) (limits.Enforced, error) {
	return limits.Enforced{}, u.err(limitsEndpoint.op(PIDRequest{PID: pid}))
}

func (u unknown) Processes(context.Context) ([]limits.Membership, error) {
	return nil, u.err(processesEndpoint.op(NoRequest{}))
}

func (u unknown) CPUCgroupOf(_ context.Context, pid int) (string, error) {
	return "", u.err(cpuCgroupEndpoint.op(PIDRequest{PID: pid}))
}

func (u unknown) Usage(_ context.Context, cgroup string) (limits.Usage, error) {
	return limits.Usage{}, u.err(usageEndpoint.op(CgroupRequest{Cgroup: cgroup}))
}

func (u unknown) ResidentBytes(_ context.Context, memoryCgroup string) (int64, error) {
	return 0, u.err(residentEndpoint.op(CgroupRequest{Cgroup: memoryCgroup}))
}

func (u unknown) AcceptorOf(_ context.Context, ns netns.Path, addr string, within time.Duration) (sockets.Acceptor, bool, error) {
	return sockets.Acceptor{}, false, u.err(acceptorEndpoint.op(AcceptorRequest{NetNS: ns, Addr: addr, Within: within}))
}

func (u unknown) Executables(context.Context) ([]Executable, error) {
	return nil, u.err(executablesEndpoint.op(NoRequest{}))
}

func (u unknown) ContainerProcess(_ context.Context, containerID string) (TaskProcess, error) {
	return TaskProcess{}, u.err(containerEndpoint.op(ContainerRequest{ContainerID: containerID}))
}

func (u unknown) NomadTaskProcess(_ context.Context, allocID, task string) (TaskProcess, error) {
	return TaskProcess{}, u.err(nomadTaskEndpoint.op(NomadTaskRequest{AllocID: allocID, Task: task}))
}

func (u unknown) SignalContainer(_ context.Context, containerID, signal string) (TaskProcess, error) {
	return TaskProcess{}, u.err(signalEndpoint.op(SignalRequest{ContainerID: containerID, Signal: signal}))
}

func (u unknown) CheckContainer(_ context.Context, c CheckRequest) (CheckResponse, error) {
	return CheckResponse{}, u.err(checkEndpoint.op(c))
}

func (u unknown) Facts(context.Context) (map[string]string, error) {
	return nil, u.err(factsEndpoint.op(NoRequest{}))
}
