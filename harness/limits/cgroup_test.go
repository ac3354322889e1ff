package limits

import (
	"os"
	"path/filepath"
	"testing"
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
