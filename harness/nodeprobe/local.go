package nodeprobe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/hostinfo"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/sockets"
)

// Local reads this machine's kernel in this process, with exactly the
// results and errors of the functions it calls. The kernel answers these
// reads at once, so the contexts are not consulted; AcceptorOf is bounded
// by its own within.
type Local struct {
	// NodeName is the name the orchestrator gives this machine.
	NodeName string
}

var _ Node = Local{}

func (l Local) Name() string { return l.NodeName }

func (Local) Limits(_ context.Context, pid int) (limits.Enforced, error) {
	return limits.ForPID(pid)
}

func (Local) Processes(context.Context) ([]limits.Membership, error) {
	return limits.Processes()
}

func (Local) CPUCgroupOf(_ context.Context, pid int) (string, error) {
	return limits.CPUCgroupOf(pid)
}

func (Local) Usage(_ context.Context, cgroup string) (limits.Usage, error) {
	return limits.UsageOf(cgroup)
}

func (Local) ResidentBytes(_ context.Context, memoryCgroup string) (int64, error) {
	return limits.ResidentBytes(memoryCgroup)
}

func (Local) AcceptorOf(_ context.Context, ns netns.Path, addr string, within time.Duration) (sockets.Acceptor, bool, error) {
	// a process's namespace is named by the node's /proc, which a probe in
	// a container sees elsewhere (HostRoots)
	if rest, ok := strings.CutPrefix(string(ns), "/proc/"); ok {
		ns = netns.Path(filepath.Join(limits.ProcRoot, rest))
	}
	return sockets.AcceptorOf(ns, addr, within)
}

// HostRoots is where a probe finds the node's kernel views when it runs in
// a container of its own, with the node's /proc, cgroup tree and Docker
// state mounted elsewhere (a Swarm service cannot share the host's PID
// namespace, so it mounts the node's /proc). Empty fields keep the
// defaults: /proc, /sys/fs/cgroup, /var/lib/docker.
type HostRoots struct {
	Proc, Cgroup, Docker string
	// System is where the node's /etc is mounted under, for its OS facts.
	System string
}

// Apply points every reader of this process at the roots.
func (h HostRoots) Apply() {
	if h.Proc != "" {
		limits.ProcRoot, sockets.ProcRoot = h.Proc, h.Proc
	}
	if h.Cgroup != "" {
		limits.Root = h.Cgroup
	}
	if h.Docker != "" {
		DockerRoot = h.Docker
	}
	if h.System != "" {
		SystemRoot = h.System
	}
}

// deletedMark is what the kernel appends to /proc/<pid>/exe's target when
// the program's file is gone.
const deletedMark = " (deleted)"

// Executables reads /proc (limits.ProcRoot). A process that exits while the
// list is read, and a kernel thread (which has no executable), are left
// out; an unreadable /proc is an error, not a node that runs nothing.
func (Local) Executables(context.Context) ([]Executable, error) {
	entries, err := os.ReadDir(limits.ProcRoot)
	if err != nil {
		return nil, fmt.Errorf("the node's processes: %w", err)
	}
	var out []Executable
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		exe, err := os.Readlink(filepath.Join(limits.ProcRoot, e.Name(), "exe"))
		if err != nil {
			continue
		}
		path, deleted := strings.CutSuffix(exe, deletedMark)
		out = append(out, Executable{PID: pid, Path: path, Deleted: deleted})
	}
	return out, nil
}

func (Local) ContainerProcess(_ context.Context, containerID string) (TaskProcess, error) {
	procs, err := limits.Processes()
	if err != nil {
		return TaskProcess{}, err
	}
	return containerProcess(procs, containerID)
}

func (Local) NomadTaskProcess(_ context.Context, allocID, task string) (TaskProcess, error) {
	procs, err := limits.Processes()
	if err != nil {
		return TaskProcess{}, err
	}
	return nomadTaskProcess(procs, allocID, task)
}

func (Local) SignalContainer(_ context.Context, containerID, signal string) (TaskProcess, error) {
	return signalContainer(containerID, signal)
}

func (Local) CheckContainer(ctx context.Context, c CheckRequest) (CheckResponse, error) {
	return checkContainer(ctx, c)
}

// SystemRoot is where the node's /etc is mounted under, when the probe
// runs in a container of its own (--system-root); empty when it is not.
var SystemRoot string

// Facts reads the OS of the node, not of the probe's image: under
// SystemRoot, else through the root of the node's init (PID 1 under
// limits.ProcRoot, which a sandbox's init may refuse), else its own root.
func (Local) Facts(context.Context) (map[string]string, error) {
	for _, root := range []string{SystemRoot, filepath.Join(limits.ProcRoot, "1", "root")} {
		if root == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "etc", "os-release")); err == nil {
			return hostinfo.FactsAt(root), nil
		}
	}
	return hostinfo.FactsAt("/"), nil
}
