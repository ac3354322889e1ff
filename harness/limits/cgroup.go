// Package limits reads the CPU and memory limits the kernel enforces on a
// process from its cgroup (v1 or v2), so the harness can refuse to measure
// when they differ from what a variant declares.
package limits

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Enforced is what the kernel applies to one process's cgroup.
type Enforced struct {
	// Cores is CFS quota ÷ period; 0 when no quota is set.
	Cores float64
	// CPUSet is the cpuset list ("0-1"); CPUSetSize its number of CPUs.
	CPUSet     string
	CPUSetSize int
	// MemoryMiB is the hard memory limit; 0 when unlimited.
	MemoryMiB int
	// CgroupPath is the process's cgroup (the cpu controller's on v1).
	CgroupPath string
}

// EffectiveCores is the quota when one is set, else the cpuset size.
func (e Enforced) EffectiveCores() float64 {
	if e.Cores > 0 {
		return e.Cores
	}
	return float64(e.CPUSetSize)
}

// Root is where cgroup filesystems are mounted; tests may point it elsewhere.
var Root = "/sys/fs/cgroup"

// unlimitedBytes: v1 reports "no limit" as a page-rounded maximum int64.
const unlimitedBytes = int64(1) << 60

// ForPID reads the limits of the cgroup pid belongs to.
func ForPID(pid int) (Enforced, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return Enforced{}, fmt.Errorf("limits: %w", err)
	}
	paths := parseProcCgroup(string(data))
	if p, ok := paths[""]; ok && len(paths) == 1 {
		return readV2(filepath.Join(Root, p), p)
	}
	return readV1(paths)
}

// parseProcCgroup maps each controller ("" for the v2 unified hierarchy) to its path.
func parseProcCgroup(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

func readV1(paths map[string]string) (Enforced, error) {
	var e Enforced
	cpuPath, ok := paths["cpu"]
	if !ok {
		return e, fmt.Errorf("limits: no cpu controller in /proc/<pid>/cgroup")
	}
	e.CgroupPath = cpuPath
	cpuDir := v1Dir("cpu", cpuPath)
	quota, err := readInt(filepath.Join(cpuDir, "cpu.cfs_quota_us"))
	if err != nil {
		return e, err
	}
	period, err := readInt(filepath.Join(cpuDir, "cpu.cfs_period_us"))
	if err != nil {
		return e, err
	}
	if quota > 0 && period > 0 {
		e.Cores = float64(quota) / float64(period)
	}
	if p, ok := paths["cpuset"]; ok {
		if s, err := readString(filepath.Join(v1Dir("cpuset", p), "cpuset.cpus")); err == nil {
			e.CPUSet = s
			e.CPUSetSize = cpusetSize(s)
		}
	}
	if p, ok := paths["memory"]; ok {
		b, err := readInt(filepath.Join(v1Dir("memory", p), "memory.limit_in_bytes"))
		if err != nil {
			return e, err
		}
		if b < unlimitedBytes {
			e.MemoryMiB = int(b >> 20)
		}
	}
	return e, nil
}

// v1Dir finds the mount of a v1 controller, which distributions name "cpu",
// "cpu,cpuacct" or "cpuacct,cpu" (and cpuacct alone or inside "cpu,cpuacct").
func v1Dir(controller, path string) string {
	for _, name := range []string{controller, controller + ",cpuacct", "cpuacct," + controller, "cpu," + controller} {
		dir := filepath.Join(Root, name)
		if _, err := os.Stat(dir); err == nil {
			return filepath.Join(dir, path)
		}
	}
	return filepath.Join(Root, controller, path)
}

func readV2(dir, path string) (Enforced, error) {
	e := Enforced{CgroupPath: path}
	s, err := readString(filepath.Join(dir, "cpu.max"))
	if err == nil {
		f := strings.Fields(s)
		if len(f) == 2 && f[0] != "max" {
			q, _ := strconv.ParseFloat(f[0], 64)
			p, _ := strconv.ParseFloat(f[1], 64)
			if p > 0 {
				e.Cores = q / p
			}
		}
	}
	if s, err := readString(filepath.Join(dir, "cpuset.cpus.effective")); err == nil {
		e.CPUSet = s
		e.CPUSetSize = cpusetSize(s)
	}
	if s, err := readString(filepath.Join(dir, "memory.max")); err == nil && s != "max" {
		b, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			e.MemoryMiB = int(b >> 20)
		}
	}
	return e, nil
}

func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("limits: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(path string) (int64, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("limits: %s: %w", path, err)
	}
	return v, nil
}

// cpusetSize counts the CPUs in a list such as "0-3,6".
func cpusetSize(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		if !isRange {
			if err1 == nil {
				n++
			}
			continue
		}
		b, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil && b >= a {
			n += b - a + 1
		}
	}
	return n
}

// Equal reports whether an enforced core count matches a declared one. Nomad
// computes quotas from integer MHz, so a 1 % tolerance absorbs that rounding
// while still catching any real mismatch (a wrong MHz-per-core is off by far more).
func Equal(enforced, declared float64) bool {
	if declared == 0 {
		return enforced == 0
	}
	return math.Abs(enforced-declared)/declared <= 0.01
}
