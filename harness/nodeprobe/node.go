// Package nodeprobe is the seam between the gates and the hosts their tasks
// run on. Every fact a gate needs about a task (the limits its cgroups
// enforce, the CPU it used and how often it was throttled, which process
// accepts a connection, which agent binaries run) is read on the task's own
// node: in this process when the node is this machine (Local), or over HTTP
// from the probe server that node runs (Client, Server) when it is not.
package nodeprobe

import (
	"context"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/sockets"
)

// Node is what the harness reads from one node's kernel. Each method has the
// semantics of the function it is named after in package limits or sockets,
// on that node; a remote node's errors name the node and what was asked.
type Node interface {
	// Name is the node's name as its orchestrator gives it.
	Name() string
	// Limits is limits.ForPID.
	Limits(ctx context.Context, pid int) (limits.Enforced, error)
	// Processes is limits.Processes.
	Processes(ctx context.Context) ([]limits.Membership, error)
	// CPUCgroupOf is limits.CPUCgroupOf.
	CPUCgroupOf(ctx context.Context, pid int) (string, error)
	// Usage is limits.UsageOf. Its At is on the harness's clock, the one
	// every window it is compared with is measured on.
	Usage(ctx context.Context, cgroup string) (limits.Usage, error)
	// ResidentBytes is limits.ResidentBytes.
	ResidentBytes(ctx context.Context, memoryCgroup string) (int64, error)
	// AcceptorOf is sockets.AcceptorOf, dialling from the node: ns is a
	// namespace file on it ("" for its own), addr an address it reaches.
	AcceptorOf(ctx context.Context, ns netns.Path, addr string, within time.Duration) (a sockets.Acceptor, found bool, err error)
	// Executables lists the executable of every process the node runs.
	Executables(ctx context.Context) ([]Executable, error)
	// ContainerProcess finds the process of a container by its full ID
	// (bare, or with the runtime's "containerd://" prefix).
	ContainerProcess(ctx context.Context, containerID string) (TaskProcess, error)
	// NomadTaskProcess finds the container process of a Nomad docker task.
	NomadTaskProcess(ctx context.Context, allocID, task string) (TaskProcess, error)
	// SignalContainer sends a signal named in Signals to a container's
	// process, and says which process it was.
	SignalContainer(ctx context.Context, containerID, signal string) (TaskProcess, error)
	// CheckContainer runs a health check inside a container's network
	// namespace; a failing check is Healthy false, not an error.
	CheckContainer(ctx context.Context, c CheckRequest) (CheckResponse, error)
	// Facts are the node's machine facts under Nomad's keys
	// (hostinfo.Facts), read on the node itself: an adapter on another
	// machine knows only its own.
	Facts(ctx context.Context) (map[string]string, error)
}

// Executable is one running process's program, as /proc/<pid>/exe names it.
type Executable struct {
	PID int `json:"pid"`
	// Path is the program's path, without the kernel's " (deleted)" mark;
	// Deleted is true when the file was removed or replaced since it started.
	Path    string `json:"path"`
	Deleted bool   `json:"deleted,omitempty"`
}

// Resolver gives the probe of a node by the name its orchestrator gives it.
// The nil Resolver reads every node from this machine (Local): the embedded
// single-node cluster, where every task runs here.
type Resolver func(node string) Node

// Node is the probe of the named node.
func (r Resolver) Node(name string) Node {
	if r == nil {
		return Local{NodeName: name}
	}
	return r(name)
}

// Machines gives the probes of the named nodes, each host once, in the
// order of names. The nil Resolver's nodes are all this machine, which
// orchestrators may name differently (Nomad's node name, Docker's
// hostname): it is given once, under the first name.
func (r Resolver) Machines(names []string) []Node {
	if len(names) == 0 {
		return nil
	}
	if r == nil {
		return []Node{Local{NodeName: names[0]}}
	}
	var out []Node
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, r(n))
		}
	}
	return out
}
