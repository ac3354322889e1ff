package nodeprobe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/orchbench/orchbench/harness/limits"
)

// TaskProcess is the process of one task's container on its node, found by
// the container's identity rather than by a PID the harness read elsewhere:
// a container runtime's PID is only meaningful on its own node.
type TaskProcess struct {
	PID int `json:"pid"`
	// ContainerID is the runtime's full hexadecimal ID of the container.
	ContainerID string `json:"container_id"`
	// ImageID is the image the container runs, when the node's Docker
	// state says (DockerRoot): its repository digest when it was pulled
	// from a registry, else its image ID (imageRefOf); empty for other
	// runtimes.
	ImageID string `json:"image_id,omitempty"`
}

// DockerRoot is the Docker daemon's data directory on this node, whose
// containers/<id>/config.v2.json names each container's image. The probe
// only reads it.
var DockerRoot = "/var/lib/docker"

// containerIDLen is the length of a Docker or CRI container ID in hex.
const containerIDLen = 64

// ContainerIDOf is the ID of the container a process runs in, from the name
// its runtime gives the container's cgroup: "<parent>/<id>" (Docker's and
// containerd's cgroupfs driver), "docker-<id>.scope" or
// "cri-containerd-<id>.scope" (the systemd driver). "" when the process is
// in no container's cgroup.
func ContainerIDOf(m limits.Membership) string {
	for _, p := range m.Paths {
		base := strings.TrimSuffix(path.Base(p), ".scope")
		if i := strings.LastIndexByte(base, '-'); i >= 0 {
			base = base[i+1:]
		}
		if isContainerID(base) {
			return base
		}
	}
	return ""
}

func isContainerID(s string) bool {
	if len(s) != containerIDLen {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// bareContainerID takes a runtime's prefix off an ID ("containerd://…",
// "docker://…", as Kubernetes reports them) and refuses anything but a
// full ID: a prefix of one could match another container.
func bareContainerID(id string) (string, error) {
	if _, after, ok := strings.Cut(id, "://"); ok {
		id = after
	}
	if !isContainerID(id) {
		return "", fmt.Errorf("%q is not a full container ID (%d lowercase hex digits)", id, containerIDLen)
	}
	return id, nil
}

// containerProcess is the lowest PID in the container's cgroup among procs
// (its init, unless PIDs wrapped).
func containerProcess(procs []limits.Membership, id string) (TaskProcess, error) {
	bare, err := bareContainerID(id)
	if err != nil {
		return TaskProcess{}, err
	}
	for _, m := range procs { // lowest PID first
		if ContainerIDOf(m) == bare {
			return TaskProcess{PID: m.PID, ContainerID: bare, ImageID: dockerImageOf(bare)}, nil
		}
	}
	return TaskProcess{}, fmt.Errorf("no process in a cgroup of container %s: %w", bare, fs.ErrNotExist)
}

// nomadTaskProcess is the lowest PID, among processes in a container's
// cgroup, whose container was started with the Nomad task's environment
// (NOMAD_ALLOC_ID and NOMAD_TASK_NAME, which Nomad's docker driver gives
// every task). The container's name, which the harness knows, is known only
// to the node's Docker daemon. The environment is read from Docker's record
// of the container, and from /proc where that is missing: a process may
// overwrite its own /proc environ (Redis writes its process title there).
func nomadTaskProcess(procs []limits.Membership, allocID, task string) (TaskProcess, error) {
	if allocID == "" || task == "" {
		return TaskProcess{}, errors.New("an allocation ID and a task name are both needed")
	}
	want := []string{"NOMAD_ALLOC_ID=" + allocID, "NOMAD_TASK_NAME=" + task}
	records := map[string]dockerRecord{} // by container ID; zero when Docker's state is unreadable
	for _, m := range procs {
		id := ContainerIDOf(m)
		if id == "" {
			continue
		}
		rec, seen := records[id]
		if !seen {
			rec = dockerRecordOf(id)
			records[id] = rec
		}
		env, ok := environOf(m.PID, rec)
		if !ok {
			continue // exited, or a kernel thread
		}
		if hasAll(env, want) {
			return TaskProcess{PID: m.PID, ContainerID: id, ImageID: imageRefOf(rec)}, nil
		}
	}
	return TaskProcess{}, fmt.Errorf("no container process with the environment of task %s of allocation %s: %w", task, allocID, fs.ErrNotExist)
}

func hasAll(vars, want []string) bool {
	for _, w := range want {
		if !slices.Contains(vars, w) {
			return false
		}
	}
	return true
}

// environOf is the environment a task's process was started with: Docker's
// record of its container when there is one, else the process's /proc
// environ (false when that is unreadable: it exited, or is a kernel thread).
func environOf(pid int, rec dockerRecord) ([]string, bool) {
	if rec.Config.Env != nil {
		return rec.Config.Env, true
	}
	raw, err := os.ReadFile(filepath.Join(limits.ProcRoot, strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil, false
	}
	return strings.Split(string(raw), "\x00"), true
}

// dockerRecord is what a task's process is matched and described by from
// Docker's record of its container: the image ID and the environment the
// container was started with.
type dockerRecord struct {
	Image  string
	Config struct {
		// Image is the reference the container was created from.
		Image  string
		Env    []string
		Labels map[string]string
	}
}

// dockerRecordOf reads container id's record under DockerRoot; the zero
// record when this node's Docker state is not readable (another runtime,
// or a probe not given it).
func dockerRecordOf(id string) dockerRecord {
	var r dockerRecord
	b, err := os.ReadFile(filepath.Join(DockerRoot, "containers", id, "config.v2.json"))
	if err != nil || json.Unmarshal(b, &r) != nil {
		return dockerRecord{}
	}
	return r
}

// dockerImageOf is the image Docker records for the container
// (imageRefOf), or "".
func dockerImageOf(id string) string { return imageRefOf(dockerRecordOf(id)) }

// Signals a probe sends to a container's process: the ones a fault needs.
// Anything else (a STOP that freezes a task, a HUP that reloads it) is a
// different experiment and refused.
var Signals = map[string]syscall.Signal{"SIGKILL": syscall.SIGKILL, "SIGTERM": syscall.SIGTERM}

// signalContainer sends sig to the container's process. The process is
// found by its cgroup's container ID, and that is checked again just before
// the signal, so the probe signals only a process inside the named
// container's cgroup, never a PID it is handed.
func signalContainer(id, sig string) (TaskProcess, error) {
	s, ok := Signals[sig]
	if !ok {
		return TaskProcess{}, fmt.Errorf("signal %q is not one a probe sends (%s)", sig, strings.Join(slices.Sorted(maps.Keys(Signals)), ", "))
	}
	procs, err := limits.Processes()
	if err != nil {
		return TaskProcess{}, err
	}
	p, err := containerProcess(procs, id)
	if err != nil {
		return TaskProcess{}, err
	}
	again, err := limits.Processes()
	if err != nil {
		return TaskProcess{}, err
	}
	still := false
	for _, m := range again {
		if m.PID == p.PID && ContainerIDOf(m) == p.ContainerID {
			still = true
		}
	}
	if !still {
		return TaskProcess{}, fmt.Errorf("pid %d left container %s before the signal: %w", p.PID, p.ContainerID, fs.ErrNotExist)
	}
	if err := syscall.Kill(p.PID, s); err != nil {
		return TaskProcess{}, fmt.Errorf("%s to pid %d: %w", sig, p.PID, err)
	}
	return p, nil
}
