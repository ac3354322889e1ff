// Package limits reads the CPU and memory limits the kernel enforces on a
// process from its cgroup (v1 or v2), so the harness can refuse to measure
// when they differ from what a variant declares. Every file that decides a
// limit must be readable and parse: a limit that could not be read is never
// taken for "no limit".
package limits

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Enforced is what the kernel applies to one process's cgroup.
type Enforced struct {
	// Version is the cgroup version the limits were read from (1 or 2).
	Version int
	// QuotaUS and PeriodUS are the CFS bandwidth limit of the process's own
	// cgroup; QuotaUS is -1 when none is set (v1's notation for v2's "max").
	QuotaUS, PeriodUS int64
	// Cores is QuotaUS ÷ PeriodUS; 0 when no quota is set.
	Cores float64
	// AncestorCores is the tightest quota of an enclosing cgroup, which caps
	// the process as well; 0 when none sets one. AncestorCPUPath names it.
	AncestorCores   float64
	AncestorCPUPath string
	// CPUSet is the cpuset list ("0-1"); CPUSetSize its number of CPUs. Both
	// are empty when the process is in no cpuset cgroup.
	CPUSet     string
	CPUSetSize int
	// MemoryBytes is the hard memory limit, MemoryMiB the same rounded down;
	// both 0 when none is set (a running process cannot have a limit of 0).
	MemoryBytes int64
	MemoryMiB   int
	// AncestorMemoryBytes is the tightest limit of an enclosing cgroup; 0 when none.
	AncestorMemoryBytes int64
	AncestorMemoryPath  string
	// CgroupPath is the process's cgroup (the cpu controller's on v1).
	CgroupPath string
	// MemoryCgroupPath is the memory controller's cgroup, which on v1 may differ.
	MemoryCgroupPath string
	// CPUWeight is the cgroup's share of contended CPU in its version's
	// unit: v1's cpu.shares (1024 by default), v2's cpu.weight (100).
	CPUWeight int64
	// SwapAccounted is true when the kernel limits swap per cgroup here;
	// SwapBytes is then the swap allowed beyond the memory limit, -1 for
	// no limit. Without an account (SwapBytes 0) the swap is not known.
	SwapAccounted bool
	SwapBytes     int64
}

// EffectiveCores is the tightest CPU cap of any kind: the process's quota, an
// enclosing quota or the size of its cpuset.
func (e Enforced) EffectiveCores() float64 {
	caps := []float64{e.Cores, e.AncestorCores, float64(e.CPUSetSize)}
	best := 0.0
	for _, c := range caps {
		if c > 0 && (best == 0 || c < best) {
			best = c
		}
	}
	return best
}

// Root is where cgroup filesystems are mounted; tests may point it elsewhere.
var Root = "/sys/fs/cgroup"

// unlimitedBytes: v1 reports "no limit" as a page-rounded maximum int64.
const unlimitedBytes = int64(1) << 60

// ForPID reads the limits of the cgroup pid belongs to.
func ForPID(pid int) (Enforced, error) {
	m, err := membershipOf(pid)
	if err != nil {
		return Enforced{}, err
	}
	var e Enforced
	if m.Unified() {
		e, err = readV2(m.Paths[""])
	} else {
		e, err = readV1(m.Paths)
	}
	if err != nil {
		return e, fmt.Errorf("limits of pid %d: %w", pid, err)
	}
	return e, nil
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
	e := Enforced{Version: 1, QuotaUS: -1}
	cpuPath, ok := paths["cpu"]
	if !ok {
		return e, errors.New("the process is in no cgroup v1 cpu hierarchy (no cpu line in /proc/<pid>/cgroup), so no CPU quota could be verified")
	}
	e.CgroupPath = cpuPath
	cpuMount, err := v1Mount("cpu")
	if err != nil {
		return e, err
	}
	if e.QuotaUS, e.PeriodUS, e.Cores, err = cfsV1(filepath.Join(cpuMount, cpuPath)); err != nil {
		return e, err
	}
	e.AncestorCores, e.AncestorCPUPath, err = tightestAncestor(cpuMount, cpuPath, func(dir string) (float64, error) {
		_, _, cores, err := cfsV1(dir)
		return cores, err
	})
	if err != nil {
		return e, err
	}
	if e.CPUWeight, err = weightV1(filepath.Join(cpuMount, cpuPath)); err != nil {
		return e, err
	}
	// Without a cpuset cgroup the process may run on any CPU; the gate
	// decides whether that matters for the variant.
	if p, ok := paths["cpuset"]; ok {
		mount, err := v1Mount("cpuset")
		if err != nil {
			return e, err
		}
		if e.CPUSet, e.CPUSetSize, err = readCPUSet(filepath.Join(mount, p, "cpuset.cpus")); err != nil {
			return e, err
		}
	}
	memPath, ok := paths["memory"]
	if !ok {
		return e, errors.New("the process is in no cgroup v1 memory hierarchy (no memory line in /proc/<pid>/cgroup), so no memory limit could be verified")
	}
	e.MemoryCgroupPath = memPath
	memMount, err := v1Mount("memory")
	if err != nil {
		return e, err
	}
	if e.MemoryBytes, err = memoryV1(filepath.Join(memMount, memPath)); err != nil {
		return e, err
	}
	if e.SwapBytes, e.SwapAccounted, err = swapV1(filepath.Join(memMount, memPath), e.MemoryBytes); err != nil {
		return e, err
	}
	e.MemoryMiB = int(e.MemoryBytes >> 20)
	e.AncestorMemoryBytes, e.AncestorMemoryPath, err = tightestAncestor(memMount, memPath, memoryV1)
	return e, err
}

// cfsV1 reads a v1 cgroup's CFS bandwidth; cores is 0 when no quota is set.
func cfsV1(dir string) (quota, period int64, cores float64, err error) {
	quotaFile := filepath.Join(dir, "cpu.cfs_quota_us")
	if quota, err = readInt(quotaFile); err != nil {
		return 0, 0, 0, err
	}
	periodFile := filepath.Join(dir, "cpu.cfs_period_us")
	if period, err = readInt(periodFile); err != nil {
		return 0, 0, 0, err
	}
	if period <= 0 {
		return 0, 0, 0, fmt.Errorf("%s: period %d is not positive", periodFile, period)
	}
	switch {
	case quota == -1:
		return -1, period, 0, nil
	case quota <= 0:
		return 0, 0, 0, fmt.Errorf("%s: %d is neither -1 (no quota) nor a positive quota", quotaFile, quota)
	}
	return quota, period, float64(quota) / float64(period), nil
}

// memoryV1 reads a v1 cgroup's hard memory limit; 0 when none is set.
func memoryV1(dir string) (int64, error) {
	file := filepath.Join(dir, "memory.limit_in_bytes")
	b, err := readInt(file)
	if err != nil {
		return 0, err
	}
	if b < 0 {
		return 0, fmt.Errorf("%s: negative limit %d", file, b)
	}
	if b >= unlimitedBytes {
		return 0, nil
	}
	return b, nil
}

// v1Mount finds the mount of a v1 controller, which distributions name after
// it alone ("cpu") or together with others ("cpu,cpuacct", "cpuacct,cpu").
func v1Mount(controller string) (string, error) {
	dir := filepath.Join(Root, controller)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	entries, err := os.ReadDir(Root)
	if err != nil {
		return "", fmt.Errorf("no cgroup v1 %s controller mounted: %w", controller, err)
	}
	for _, ent := range entries {
		for _, c := range strings.Split(ent.Name(), ",") {
			if c == controller {
				return filepath.Join(Root, ent.Name()), nil
			}
		}
	}
	return "", fmt.Errorf("no cgroup v1 %s controller mounted under %s", controller, Root)
}

// v1Dir is the directory of a v1 cgroup in a controller's hierarchy; when
// the controller is not mounted the path it names does not exist, so the
// read that follows reports it.
func v1Dir(controller, cgroup string) string {
	mount, err := v1Mount(controller)
	if err != nil {
		mount = filepath.Join(Root, controller)
	}
	return filepath.Join(mount, cgroup)
}

func readV2(cgroup string) (Enforced, error) {
	e := Enforced{Version: 2, QuotaUS: -1, CgroupPath: cgroup, MemoryCgroupPath: cgroup}
	dir := filepath.Join(Root, cgroup)
	var err error
	e.QuotaUS, e.PeriodUS, e.Cores, err = cpuMaxV2(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return e, fmt.Errorf("cgroup %s has no cpu.max: the cpu controller is not enabled for it, so no CPU quota could be verified (%w)", cgroup, err)
	}
	if err != nil {
		return e, err
	}
	e.AncestorCores, e.AncestorCPUPath, err = tightestAncestor(Root, cgroup, optionalV2(func(dir string) (float64, error) {
		_, _, cores, err := cpuMaxV2(dir)
		return cores, err
	}))
	if err != nil {
		return e, err
	}
	if e.CPUWeight, err = weightV2(dir); err != nil {
		return e, err
	}
	// cpuset.cpus.effective exists only where the cpuset controller is
	// enabled; without it the process may run on any CPU.
	e.CPUSet, e.CPUSetSize, err = readCPUSet(filepath.Join(dir, "cpuset.cpus.effective"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return e, err
	}
	e.MemoryBytes, err = memoryMaxV2(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return e, fmt.Errorf("cgroup %s has no memory.max: the memory controller is not enabled for it, so no memory limit could be verified (%w)", cgroup, err)
	}
	if err != nil {
		return e, err
	}
	e.MemoryMiB = int(e.MemoryBytes >> 20)
	if e.SwapBytes, e.SwapAccounted, err = swapV2(dir); err != nil {
		return e, err
	}
	e.AncestorMemoryBytes, e.AncestorMemoryPath, err = tightestAncestor(Root, cgroup, optionalV2(memoryMaxV2))
	return e, err
}

// optionalV2 treats a missing file as "no limit": on v2 the root cgroup has
// no cpu.max or memory.max, while every cgroup below it that has a child
// with the controller has them.
func optionalV2[T int64 | float64](read func(dir string) (T, error)) func(string) (T, error) {
	return func(dir string) (T, error) {
		v, err := read(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return v, err
	}
}

// cpuMaxV2 reads "max 100000" (no quota) or "50000 100000".
func cpuMaxV2(dir string) (quota, period int64, cores float64, err error) {
	file := filepath.Join(dir, "cpu.max")
	s, err := readString(file)
	if err != nil {
		return 0, 0, 0, err
	}
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, 0, fmt.Errorf("%s: %q is not \"<quota|max> <period>\"", file, s)
	}
	period, err = strconv.ParseInt(f[1], 10, 64)
	if err != nil || period <= 0 {
		return 0, 0, 0, fmt.Errorf("%s: %q has no positive period", file, s)
	}
	if f[0] == "max" {
		return -1, period, 0, nil
	}
	quota, err = strconv.ParseInt(f[0], 10, 64)
	if err != nil || quota <= 0 {
		return 0, 0, 0, fmt.Errorf("%s: %q has neither max nor a positive quota", file, s)
	}
	return quota, period, float64(quota) / float64(period), nil
}

// memoryMaxV2 reads memory.max: "max" or bytes; 0 when no limit is set.
func memoryMaxV2(dir string) (int64, error) {
	file := filepath.Join(dir, "memory.max")
	s, err := readString(file)
	if err != nil {
		return 0, err
	}
	if s == "max" {
		return 0, nil
	}
	b, err := strconv.ParseInt(s, 10, 64)
	if err != nil || b < 0 {
		return 0, fmt.Errorf("%s: %q is neither max nor a byte count", file, s)
	}
	return b, nil
}

// tightestAncestor walks from cgroup's parent up to the hierarchy's root
// under mount and returns the smallest limit any of them sets (0: none).
func tightestAncestor[T int64 | float64](mount, cgroup string, read func(dir string) (T, error)) (T, string, error) {
	var best T
	var where string
	for p := path.Clean("/" + cgroup); p != "/"; {
		p = path.Dir(p)
		v, err := read(filepath.Join(mount, p))
		if err != nil {
			return 0, "", fmt.Errorf("enclosing cgroup %s: %w", p, err)
		}
		if v > 0 && (best == 0 || v < best) {
			best, where = v, p
		}
	}
	return best, where, nil
}

func readCPUSet(file string) (string, int, error) {
	s, err := readString(file)
	if err != nil {
		return "", 0, err
	}
	cpus, err := ParseCPUList(s)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", file, err)
	}
	return s, len(cpus), nil
}

func readString(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err // os errors name the file
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(file string) (int64, error) {
	s, err := readString(file)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", file, s)
	}
	return v, nil
}

// ParseCPUList turns a kernel CPU list such as "0-3,6" into its sorted CPUs.
func ParseCPUList(s string) ([]int, error) {
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, fmt.Errorf("%q is not a CPU list", s)
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	out := make([]int, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
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
