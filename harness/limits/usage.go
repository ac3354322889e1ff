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
		return u, err
	}
	u.CPU = time.Duration(ns)
	return u, nil
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
