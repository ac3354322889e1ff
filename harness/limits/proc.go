package limits

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
)

// ProcRoot is where the proc filesystem is mounted; tests point it at a fake tree.
var ProcRoot = "/proc"

// Membership is a process and the cgroups /proc/<pid>/cgroup puts it in.
type Membership struct {
	PID int
	// Paths maps each v1 controller to the process's cgroup in it; "" is
	// the v2 unified hierarchy.
	Paths map[string]string
}

// Unified reports whether the process lives in a pure cgroup v2 hierarchy.
// A hybrid host lists the unified hierarchy next to the v1 controllers, and
// there the v1 controllers are the ones enforcing limits.
func (m Membership) Unified() bool {
	_, ok := m.Paths[""]
	return ok && len(m.Paths) == 1
}

func membershipOf(pid int) (Membership, error) {
	b, err := os.ReadFile(filepath.Join(ProcRoot, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return Membership{}, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	return Membership{PID: pid, Paths: parseProcCgroup(string(b))}, nil
}

// Processes lists the cgroup membership of every process, lowest PID first.
// A process that exits while the list is read is left out.
func Processes() ([]Membership, error) {
	entries, err := os.ReadDir(ProcRoot)
	if err != nil {
		return nil, fmt.Errorf("limits: list processes: %w", err)
	}
	var out []Membership
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid <= 0 {
			continue
		}
		m, err := membershipOf(pid)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// CPUCgroupOf is the cgroup a process's CPU is accounted in: the v1 cpu
// controller's path, or the v2 unified path. Limits.CgroupPath is the same
// for an instance's processes, so a process can be told to be the instance's.
func CPUCgroupOf(pid int) (string, error) {
	m, err := membershipOf(pid)
	if err != nil {
		return "", err
	}
	if m.Unified() {
		return m.Paths[""], nil
	}
	if p, ok := m.Paths["cpu"]; ok {
		return p, nil
	}
	return "", fmt.Errorf("pid %d is in no cgroup v1 cpu hierarchy", pid)
}
