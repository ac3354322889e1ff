package nodeprobe

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/sockets"
)

// The protocol: every operation is a POST of its request as JSON to its
// versioned path, answered by its response as JSON (200) or by an Error as
// JSON (any other status). Client and Server both take paths, request and
// response types, and the wording of what was asked from the endpoints
// below, so the two cannot drift apart.

// endpoint is one operation of the protocol.
type endpoint[Req, Resp any] struct {
	path string
	// op says what was asked, as errors begin: "limits of pid 4242".
	op func(Req) string
}

// PIDRequest asks about one process.
type PIDRequest struct {
	PID int `json:"pid"`
}

// CgroupRequest asks about one cgroup, by its path below the controller's
// mount (limits.Enforced's CgroupPath or MemoryCgroupPath).
type CgroupRequest struct {
	Cgroup string `json:"cgroup"`
}

// AcceptorRequest asks which process accepts a connection to Addr opened
// from namespace NetNS ("" for the node's own), waiting up to Within.
type AcceptorRequest struct {
	NetNS  netns.Path    `json:"netns,omitempty"`
	Addr   string        `json:"addr"`
	Within time.Duration `json:"within_ns"`
}

// AcceptorResponse is sockets.AcceptorOf's answer.
type AcceptorResponse struct {
	Acceptor sockets.Acceptor `json:"acceptor"`
	Found    bool             `json:"found"`
}

// IdentityResponse says which node a probe serves.
type IdentityResponse struct {
	Node string `json:"node"`
}

// ContainerRequest names a container by its runtime's full ID.
type ContainerRequest struct {
	ContainerID string `json:"container_id"`
}

// NomadTaskRequest names a Nomad task by its allocation and name.
type NomadTaskRequest struct {
	AllocID string `json:"alloc_id"`
	Task    string `json:"task"`
}

// SignalRequest asks for a signal (a key of Signals) to a container.
type SignalRequest struct {
	ContainerID string `json:"container_id"`
	Signal      string `json:"signal"`
}

// NoRequest is the request of an operation that takes no argument.
type NoRequest struct{}

var (
	identityEndpoint = endpoint[NoRequest, IdentityResponse]{"/v1/identity", func(NoRequest) string { return "identity" }}
	factsEndpoint    = endpoint[NoRequest, map[string]string]{"/v1/facts", func(NoRequest) string { return "machine facts" }}
	limitsEndpoint   = endpoint[PIDRequest, limits.Enforced]{"/v1/limits", func(r PIDRequest) string {
		return fmt.Sprintf("limits of pid %d", r.PID)
	}}
	processesEndpoint = endpoint[NoRequest, []limits.Membership]{"/v1/processes", func(NoRequest) string {
		return "cgroups of every process"
	}}
	cpuCgroupEndpoint = endpoint[PIDRequest, string]{"/v1/cpu-cgroup", func(r PIDRequest) string {
		return fmt.Sprintf("CPU cgroup of pid %d", r.PID)
	}}
	usageEndpoint = endpoint[CgroupRequest, limits.Usage]{"/v1/usage", func(r CgroupRequest) string {
		return fmt.Sprintf("CPU usage of cgroup %s", r.Cgroup)
	}}
	residentEndpoint = endpoint[CgroupRequest, int64]{"/v1/resident-bytes", func(r CgroupRequest) string {
		return fmt.Sprintf("resident memory of cgroup %s", r.Cgroup)
	}}
	acceptorEndpoint = endpoint[AcceptorRequest, AcceptorResponse]{"/v1/acceptor", func(r AcceptorRequest) string {
		if r.NetNS != "" {
			return fmt.Sprintf("acceptor of %s in network namespace %s", r.Addr, r.NetNS)
		}
		return "acceptor of " + r.Addr
	}}
	executablesEndpoint = endpoint[NoRequest, []Executable]{"/v1/executables", func(NoRequest) string {
		return "executables of every process"
	}}
	containerEndpoint = endpoint[ContainerRequest, TaskProcess]{"/v1/container", func(r ContainerRequest) string {
		return "process of container " + r.ContainerID
	}}
	nomadTaskEndpoint = endpoint[NomadTaskRequest, TaskProcess]{"/v1/nomad-task", func(r NomadTaskRequest) string {
		return fmt.Sprintf("process of task %s of allocation %s", r.Task, r.AllocID)
	}}
	signalEndpoint = endpoint[SignalRequest, TaskProcess]{"/v1/signal", func(r SignalRequest) string {
		return fmt.Sprintf("%s to container %s", r.Signal, r.ContainerID)
	}}
	checkEndpoint = endpoint[CheckRequest, CheckResponse]{"/v1/check", func(r CheckRequest) string {
		return fmt.Sprintf("%s check of %s in container %s", r.Type, r.Address, r.ContainerID)
	}}
)

// Kinds of failure a caller may act on, carried across the wire so that
// errors.Is and errors.As answer for a remote node as for a local one.
const (
	// KindNotExist: a file or process the operation needed does not exist.
	KindNotExist = "not-exist"
	// KindDial: the connection could not be opened (AcceptorOf); the
	// load-path gate reads it as an address nobody answers at.
	KindDial = "dial"
	// KindRefused: the probe would not serve the request (wrong node, or
	// a missing token); the node was not read.
	KindRefused = "refused"
)

// NodeHeader names the node a request is meant for; a probe serving
// another node refuses it. TokenHeader carries the shared token.
const (
	NodeHeader  = "X-Orchbench-Node"
	TokenHeader = "X-Orchbench-Probe-Token"
)

// Error is a failure on a node, as the server sends it and the client
// returns it.
type Error struct {
	Node string `json:"node"`
	// Op is what was asked (an endpoint's op); Message what went wrong.
	Op      string `json:"op"`
	Message string `json:"message"`
	// Kind is KindNotExist, KindDial or empty.
	Kind string `json:"kind,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("node %s: %s: %s", e.Node, e.Op, e.Message)
}

// Unwrap gives the local error of the same kind, so a caller's errors.Is
// (fs.ErrNotExist) or errors.As (*net.OpError) works on remote errors.
func (e *Error) Unwrap() error {
	switch e.Kind {
	case KindNotExist:
		return fs.ErrNotExist
	case KindDial:
		return &net.OpError{Op: "dial", Net: "tcp", Err: errors.New(e.Message)}
	}
	return nil
}

// kindOf classifies a local error for the wire.
func kindOf(err error) string {
	var dial *net.OpError
	switch {
	case errors.As(err, &dial) && dial.Op == "dial":
		return KindDial
	case errors.Is(err, fs.ErrNotExist):
		return KindNotExist
	}
	return ""
}
