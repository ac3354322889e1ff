package limits

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCpusetSize(t *testing.T) {
	for in, want := range map[string]int{"0": 1, "0-1": 2, "0-3,6": 5, "": 0, "2,4-5": 3} {
		if got := cpusetSize(in); got != want {
			t.Errorf("cpusetSize(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestReadV1FromFakeHierarchy(t *testing.T) {
	old := Root
	Root = t.TempDir()
	defer func() { Root = old }()
	write := func(rel, v string) {
		p := filepath.Join(Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "25000")
	write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000")
	write("cpuset/docker/abc/cpuset.cpus", "0-1")
	write("memory/docker/abc/memory.limit_in_bytes", "268435456")
	paths := parseProcCgroup("12:cpu,cpuacct:/docker/abc\n5:cpuset:/docker/abc\n3:memory:/docker/abc\n")
	e, err := readV1(paths)
	if err != nil {
		t.Fatal(err)
	}
	if e.Cores != 0.25 || e.MemoryMiB != 256 || e.CPUSetSize != 2 || e.EffectiveCores() != 0.25 {
		t.Fatalf("got %+v", e)
	}
	write("memory/docker/abc/memory.limit_in_bytes", "9223372036854771712")
	write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1")
	e, err = readV1(paths)
	if err != nil {
		t.Fatal(err)
	}
	if e.MemoryMiB != 0 || e.Cores != 0 || e.EffectiveCores() != 2 {
		t.Fatalf("unlimited read as %+v", e)
	}
}

func TestOwnProcessHasReadableCgroup(t *testing.T) {
	e, err := ForPID(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if e.CgroupPath == "" {
		t.Fatalf("nothing read for our own process: %+v", e)
	}
}

func TestEqual(t *testing.T) {
	if !Equal(0.2495, 0.25) || Equal(0.3, 0.25) || !Equal(0, 0) || Equal(0.5, 0) {
		t.Fatal("Equal tolerance wrong")
	}
}

func TestUsageFromFakeHierarchies(t *testing.T) {
	old := Root
	defer func() { Root = old }()
	write := func(rel, v string) {
		p := filepath.Join(Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Root = t.TempDir()
	write("cpu,cpuacct/docker/abc/cpu.stat", "nr_periods 200\nnr_throttled 50\nthrottled_time 123\n")
	write("cpu,cpuacct/docker/abc/cpuacct.usage", "1500000000\n")
	u, err := UsageOf("/docker/abc")
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU != 1500*time.Millisecond || u.Periods != 200 || u.Throttled != 50 {
		t.Fatalf("v1: %+v", u)
	}
	later := Usage{At: u.At.Add(2 * time.Second), CPU: u.CPU + time.Second, Periods: 220, Throttled: 60}
	if cores, thr := u.Between(later); cores != 0.5 || thr != 0.5 {
		t.Fatalf("between: %.3f cores, %.3f throttled", cores, thr)
	}

	Root = t.TempDir()
	write("system.slice/x.scope/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 10\nnr_throttled 1\nthrottled_usec 10\n")
	if u, err = UsageOf("/system.slice/x.scope"); err != nil || u.CPU != 2500*time.Millisecond || u.Periods != 10 || u.Throttled != 1 {
		t.Fatalf("v2: %+v %v", u, err)
	}
}

func TestOwnCgroupUsageGrows(t *testing.T) {
	e, err := ForPID(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	before, err := UsageOf(e.CgroupPath)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := UsageOf(e.CgroupPath)
	if err != nil {
		t.Fatal(err)
	}
	if after.CPU-before.CPU < 10*time.Millisecond {
		t.Fatalf("50 ms of spinning added only %s of CPU to our cgroup %s", after.CPU-before.CPU, e.CgroupPath)
	}
}
