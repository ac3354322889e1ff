package limits

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Usage is a cgroup's cumulative CPU accounting at one moment; two of them
// give how much CPU a task used over a window and how often its quota
// stopped it.
type Usage struct {
	At  time.Time
	CPU time.Duration // user + system time of every process in the cgroup
	// Periods counts CFS enforcement periods with runnable work; Throttled
	// those in which the quota ran out.
	Periods, Throttled int64
}

// UsageOf reads the accounting of the cgroup at path, as Enforced.CgroupPath
// gives it (the cpu controller's path on v1, the unified path on v2).
func UsageOf(path string) (Usage, error) {
	u := Usage{At: time.Now()}
	if stat, err := readStat(filepath.Join(Root, path, "cpu.stat")); err == nil {
		if usec, ok := stat["usage_usec"]; ok { // v2
			u.CPU = time.Duration(usec) * time.Microsecond
			u.Periods, u.Throttled = stat["nr_periods"], stat["nr_throttled"]
			return u, nil
		}
	}
	stat, err := readStat(filepath.Join(v1Dir("cpu", path), "cpu.stat"))
	if err != nil {
		return u, err
	}
	u.Periods, u.Throttled = stat["nr_periods"], stat["nr_throttled"]
	ns, err := readInt(filepath.Join(v1Dir("cpuacct", path), "cpuacct.usage"))
	if err != nil {
		// Where cpu and cpuacct are mounted apart, Nomad's exec tasks get a
		// cpu cgroup of their own but stay in the root cpuacct group: their
		// processes' own counters still say what they used.
		cpu, perr := processesCPU(filepath.Join(v1Dir("cpu", path), "cgroup.procs"))
		if perr != nil {
			return u, err
		}
		u.CPU = cpu
		return u, nil
	}
	u.CPU = time.Duration(ns)
	return u, nil
}

// userHZ is the unit of /proc/<pid>/stat's CPU times, fixed at 100 by the
// kernel's ABI whatever its internal tick.
const userHZ = 100

// processesCPU sums user and system time, with that of reaped children, of
// the processes listed in a cgroup.procs file.
func processesCPU(procsFile string) (time.Duration, error) {
	b, err := os.ReadFile(procsFile)
	if err != nil {
		return 0, fmt.Errorf("limits: %w", err)
	}
	var ticks int64
	found := false
	for _, pid := range strings.Fields(string(b)) {
		stat, err := os.ReadFile(filepath.Join(ProcRoot, pid, "stat"))
		if err != nil {
			continue // exited since the list was read
		}
		// the command name may hold spaces and parentheses: count fields
		// from the last ')'; utime, stime, cutime, cstime are fields 14-17
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 15 {
			continue
		}
		for _, v := range f[11:15] {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("limits: %s/stat: %q is not a tick count", pid, v)
			}
			ticks += n
		}
		found = true
	}
	if !found {
		return 0, fmt.Errorf("limits: no readable process in %s", procsFile)
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// Between is what happened from u to later: CPU cores used on average and
// the share of enforcement periods that were throttled.
func (u Usage) Between(later Usage) (cores, throttledRatio float64) {
	wall := later.At.Sub(u.At)
	if wall <= 0 {
		return 0, 0
	}
	cores = float64(later.CPU-u.CPU) / float64(wall)
	if p := later.Periods - u.Periods; p > 0 {
		throttledRatio = float64(later.Throttled-u.Throttled) / float64(p)
	}
	return cores, throttledRatio
}

// readStat parses a "key value" per line file such as cpu.stat.
func readStat(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, sc.Err()
}
