package limits

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeHost points Root and ProcRoot at a temporary tree. files maps paths
// relative to the cgroup root to their content; "dir:" makes a directory
// instead, so a read of it fails the way an unreadable file does.
func fakeHost(t *testing.T, files map[string]string, procs map[int]string) {
	t.Helper()
	oldRoot, oldProc := Root, ProcRoot
	t.Cleanup(func() { Root, ProcRoot = oldRoot, oldProc })
	Root, ProcRoot = t.TempDir(), t.TempDir()
	for rel, content := range files {
		writeFake(t, filepath.Join(Root, rel), content)
	}
	for pid, cgroup := range procs {
		writeFake(t, filepath.Join(ProcRoot, strconv.Itoa(pid), "cgroup"), cgroup)
	}
}

func writeFake(t *testing.T, p, content string) {
	t.Helper()
	if content == "dir:" {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// merge returns base with over applied; "" in over deletes a file.
func merge(base, over map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == "" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// A docker container on a v1 host with cpu and cpuacct mounted together, as
// many distributions do, with Docker's own parent above it.
var v1Docker = map[string]string{
	"cpu,cpuacct/cpu.cfs_quota_us":                 "-1",
	"cpu,cpuacct/cpu.cfs_period_us":                "100000",
	"cpu,cpuacct/docker/cpu.cfs_quota_us":          "-1",
	"cpu,cpuacct/docker/cpu.cfs_period_us":         "100000",
	"cpu,cpuacct/docker/abc/cpu.cfs_quota_us":      "25000",
	"cpu,cpuacct/docker/abc/cpu.cfs_period_us":     "100000",
	"cpu,cpuacct/docker/abc/cpu.shares":            "256",
	"cpuset/docker/abc/cpuset.cpus":                "0-1",
	"memory/memory.limit_in_bytes":                 "9223372036854771712",
	"memory/docker/memory.limit_in_bytes":          "9223372036854771712",
	"memory/docker/abc/memory.limit_in_bytes":      "268435456",
	"memory/docker/abc/memory.soft_limit_in_bytes": "0",
}

const v1DockerProc = "12:cpu,cpuacct:/docker/abc\n5:cpuset:/docker/abc\n3:memory:/docker/abc\n1:name=systemd:/docker/abc\n"

// An exec task on a v2 host in Nomad's reserve partition.
var v2Exec = map[string]string{
	"nomad.slice/cpu.max":                                          "max 100000",
	"nomad.slice/memory.max":                                       "max",
	"nomad.slice/reserve.slice/cpu.max":                            "max 100000",
	"nomad.slice/reserve.slice/memory.max":                         "max",
	"nomad.slice/reserve.slice/a1.web.scope/cpu.max":               "max 100000",
	"nomad.slice/reserve.slice/a1.web.scope/cpuset.cpus.effective": "2-3",
	"nomad.slice/reserve.slice/a1.web.scope/memory.max":            "1073741824",
	"nomad.slice/reserve.slice/a1.web.scope/cpu.weight":            "100",
	"nomad.slice/reserve.slice/a1.web.scope/memory.swap.max":       "0",
}

const v2ExecProc = "0::/nomad.slice/reserve.slice/a1.web.scope\n"

func TestForPIDReadsWhatIsEnforced(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		proc  string
		want  Enforced
	}{
		{"v1 docker with a quota", v1Docker, v1DockerProc, Enforced{Version: 1, CPUWeight: 256, QuotaUS: 25000, PeriodUS: 100000, Cores: 0.25,
			CPUSet: "0-1", CPUSetSize: 2, MemoryBytes: 256 << 20, MemoryMiB: 256, CgroupPath: "/docker/abc", MemoryCgroupPath: "/docker/abc"}},
		{"v1 no quota and no memory limit", merge(v1Docker, map[string]string{
			"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "-1", "memory/docker/abc/memory.limit_in_bytes": "9223372036854771712"}), v1DockerProc,
			Enforced{Version: 1, CPUWeight: 256, QuotaUS: -1, PeriodUS: 100000, CPUSet: "0-1", CPUSetSize: 2, CgroupPath: "/docker/abc", MemoryCgroupPath: "/docker/abc"}},
		{"v1 quota and memory limit set on the enclosing cgroup", merge(v1Docker, map[string]string{
			"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "-1", "cpu,cpuacct/docker/cpu.cfs_quota_us": "50000",
			"memory/docker/memory.limit_in_bytes": "134217728"}), v1DockerProc,
			Enforced{Version: 1, CPUWeight: 256, QuotaUS: -1, PeriodUS: 100000, AncestorCores: 0.5, AncestorCPUPath: "/docker", CPUSet: "0-1", CPUSetSize: 2,
				MemoryBytes: 256 << 20, MemoryMiB: 256, AncestorMemoryBytes: 128 << 20, AncestorMemoryPath: "/docker",
				CgroupPath: "/docker/abc", MemoryCgroupPath: "/docker/abc"}},
		{"v1 without a cpuset cgroup", v1Docker, "12:cpu,cpuacct:/docker/abc\n3:memory:/docker/abc\n",
			Enforced{Version: 1, CPUWeight: 256, QuotaUS: 25000, PeriodUS: 100000, Cores: 0.25, MemoryBytes: 256 << 20, MemoryMiB: 256, CgroupPath: "/docker/abc", MemoryCgroupPath: "/docker/abc"}},
		{"hybrid host: the v1 controllers enforce", v1Docker, v1DockerProc + "0::/docker/abc\n", Enforced{Version: 1, CPUWeight: 256, QuotaUS: 25000, PeriodUS: 100000, Cores: 0.25,
			CPUSet: "0-1", CPUSetSize: 2, MemoryBytes: 256 << 20, MemoryMiB: 256, CgroupPath: "/docker/abc", MemoryCgroupPath: "/docker/abc"}},
		{"v2 max is no quota", v2Exec, v2ExecProc, Enforced{Version: 2, CPUWeight: 100, SwapAccounted: true, QuotaUS: -1, PeriodUS: 100000, CPUSet: "2-3", CPUSetSize: 2,
			MemoryBytes: 1 << 30, MemoryMiB: 1024, CgroupPath: "/nomad.slice/reserve.slice/a1.web.scope", MemoryCgroupPath: "/nomad.slice/reserve.slice/a1.web.scope"}},
		{"v2 quota, unlimited memory, enclosing quota, no cpuset controller", merge(v2Exec, map[string]string{
			"nomad.slice/reserve.slice/a1.web.scope/cpu.max": "50000 100000", "nomad.slice/reserve.slice/a1.web.scope/memory.max": "max",
			"nomad.slice/cpu.max": "300000 100000", "nomad.slice/reserve.slice/a1.web.scope/cpuset.cpus.effective": ""}), v2ExecProc,
			Enforced{Version: 2, CPUWeight: 100, SwapAccounted: true, QuotaUS: 50000, PeriodUS: 100000, Cores: 0.5, AncestorCores: 3, AncestorCPUPath: "/nomad.slice",
				CgroupPath: "/nomad.slice/reserve.slice/a1.web.scope", MemoryCgroupPath: "/nomad.slice/reserve.slice/a1.web.scope"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fakeHost(t, c.files, map[int]string{42: c.proc})
			got, err := ForPID(42)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// Every way a limit can fail to be read must be an error that says where,
// never a silent "no limit".
func TestForPIDRefusesWhatItCannotRead(t *testing.T) {
	scope := "nomad.slice/reserve.slice/a1.web.scope/"
	cases := []struct {
		name  string
		files map[string]string
		proc  string
		want  []string // each must appear in the error
	}{
		{"v1 no cpu controller in the process's cgroups", v1Docker, "5:cpuset:/docker/abc\n3:memory:/docker/abc\n",
			[]string{"no cgroup v1 cpu hierarchy", "no CPU quota could be verified"}},
		{"v1 no memory controller in the process's cgroups", v1Docker, "12:cpu,cpuacct:/docker/abc\n5:cpuset:/docker/abc\n",
			[]string{"no cgroup v1 memory hierarchy", "no memory limit could be verified"}},
		{"v1 memory controller listed but not mounted", merge(v1Docker, map[string]string{
			"memory/memory.limit_in_bytes": "", "memory/docker/memory.limit_in_bytes": "", "memory/docker/abc/memory.limit_in_bytes": "",
			"memory/docker/abc/memory.soft_limit_in_bytes": ""}), v1DockerProc, []string{"no cgroup v1 memory controller mounted"}},
		{"v1 unparsable quota", merge(v1Docker, map[string]string{"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "lots"}), v1DockerProc,
			[]string{"docker/abc/cpu.cfs_quota_us", `"lots" is not an integer`}},
		{"v1 zero quota", merge(v1Docker, map[string]string{"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "0"}), v1DockerProc,
			[]string{"cpu.cfs_quota_us: 0 is neither -1"}},
		{"v1 missing period", merge(v1Docker, map[string]string{"cpu,cpuacct/docker/abc/cpu.cfs_period_us": ""}), v1DockerProc,
			[]string{"docker/abc/cpu.cfs_period_us", "no such file"}},
		{"v1 unreadable memory limit", merge(v1Docker, map[string]string{"memory/docker/abc/memory.limit_in_bytes": "dir:"}), v1DockerProc,
			[]string{"docker/abc/memory.limit_in_bytes"}},
		{"v1 unreadable enclosing quota", merge(v1Docker, map[string]string{"cpu,cpuacct/docker/cpu.cfs_quota_us": "dir:"}), v1DockerProc,
			[]string{"enclosing cgroup /docker", "docker/cpu.cfs_quota_us"}},
		{"v1 unparsable cpuset", merge(v1Docker, map[string]string{"cpuset/docker/abc/cpuset.cpus": "0-"}), v1DockerProc,
			[]string{"cpuset.cpus", `"0-" is not a CPU list`}},
		{"v2 missing cpu.max: cpu controller not enabled", merge(v2Exec, map[string]string{scope + "cpu.max": ""}), v2ExecProc,
			[]string{"cgroup /nomad.slice/reserve.slice/a1.web.scope has no cpu.max", "cpu controller is not enabled", "no CPU quota could be verified"}},
		{"v2 unreadable cpu.max", merge(v2Exec, map[string]string{scope + "cpu.max": "dir:"}), v2ExecProc,
			[]string{scope + "cpu.max"}},
		{"v2 unparsable cpu.max", merge(v2Exec, map[string]string{scope + "cpu.max": "50000"}), v2ExecProc,
			[]string{"cpu.max", `"50000" is not "<quota|max> <period>"`}},
		{"v2 cpu.max quota not a number", merge(v2Exec, map[string]string{scope + "cpu.max": "half 100000"}), v2ExecProc,
			[]string{"cpu.max", "neither max nor a positive quota"}},
		{"v2 missing memory.max: memory controller not enabled", merge(v2Exec, map[string]string{scope + "memory.max": ""}), v2ExecProc,
			[]string{"has no memory.max", "memory controller is not enabled"}},
		{"v2 unparsable memory.max", merge(v2Exec, map[string]string{scope + "memory.max": "1G"}), v2ExecProc,
			[]string{"memory.max", `"1G" is neither max nor a byte count`}},
		{"v2 unreadable cpuset", merge(v2Exec, map[string]string{scope + "cpuset.cpus.effective": "dir:"}), v2ExecProc,
			[]string{"cpuset.cpus.effective"}},
		{"v2 unreadable enclosing cpu.max", merge(v2Exec, map[string]string{"nomad.slice/cpu.max": "dir:"}), v2ExecProc,
			[]string{"enclosing cgroup /nomad.slice", "nomad.slice/cpu.max"}},
		{"no such process", v2Exec, "", []string{"limits of pid 43"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			procs := map[int]string{42: c.proc}
			pid := 42
			if c.proc == "" {
				procs, pid = nil, 43
			}
			fakeHost(t, c.files, procs)
			e, err := ForPID(pid)
			if err == nil {
				t.Fatalf("no error; read %+v", e)
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestEffectiveCoresIsTheTightestCap(t *testing.T) {
	for _, c := range []struct {
		e    Enforced
		want float64
	}{
		{Enforced{Cores: 0.25, CPUSetSize: 2}, 0.25},
		{Enforced{CPUSetSize: 2}, 2},
		{Enforced{Cores: 4, CPUSetSize: 2}, 2},
		{Enforced{Cores: 1, AncestorCores: 0.5, CPUSetSize: 2}, 0.5},
		{Enforced{}, 0},
	} {
		if got := c.e.EffectiveCores(); got != c.want {
			t.Errorf("%+v: %g, want %g", c.e, got, c.want)
		}
	}
}

func TestProcessesListsMembershipLowestPIDFirst(t *testing.T) {
	fakeHost(t, nil, map[int]string{
		300: "0::/nomad.slice/share.slice/a1.web-cache.scope\n",
		12:  "4:memory:/nomad/a1.web\n2:cpu,cpuacct:/nomad/a1.web\n",
	})
	writeFake(t, filepath.Join(ProcRoot, "self", "cgroup"), "0::/\n") // not a PID
	writeFake(t, filepath.Join(ProcRoot, "77"), "dir:")               // exited while listed
	ps, err := Processes()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].PID != 12 || ps[1].PID != 300 {
		t.Fatalf("got %+v", ps)
	}
	if ps[0].Unified() || ps[0].Paths["cpu"] != "/nomad/a1.web" || !ps[1].Unified() {
		t.Fatalf("memberships wrong: %+v", ps)
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-1": {0, 1}, "0-3,6": {0, 1, 2, 3, 6}, "2,4-5": {2, 4, 5}, "1,1-2": {1, 2}} {
		got, err := ParseCPUList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a", "3-1", "0-", "-1", "0,,1"} {
		if got, err := ParseCPUList(in); err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", in, got)
		}
	}
}

func TestOwnProcessHasReadableCgroup(t *testing.T) {
	e, err := ForPID(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if e.CgroupPath == "" || e.Version == 0 {
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

// Nomad's exec tasks on a host with cpu and cpuacct mounted apart: no
// cpuacct.usage in their cpu cgroup, so their processes' counters are summed.
func TestUsageOfExecTaskFromItsProcesses(t *testing.T) {
	fakeHost(t, map[string]string{
		"cpu/nomad/a1.web/cpu.stat":     "nr_periods 40\nnr_throttled 0\nthrottled_time 0",
		"cpu/nomad/a1.web/cgroup.procs": "4242\n4243\n4299",
		"cpuacct/cpuacct.usage":         "999999999999",
	}, nil)
	// node's command name has a space and a parenthesis; 4299 has exited
	writeFake(t, filepath.Join(ProcRoot, "4242", "stat"), "4242 (node (main)) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 11 0 100 0 0")
	writeFake(t, filepath.Join(ProcRoot, "4243", "stat"), "4243 (sh) S 4242 4242 4242 0 -1 4194560 1 0 0 0 20 10 0 0 20 0 1 0 101 0 0")
	u, err := UsageOf("/nomad/a1.web")
	if err != nil {
		t.Fatal(err)
	}
	// (150+50+7+3) + (20+10) ticks at 100 Hz
	if u.CPU != 2400*time.Millisecond || u.Periods != 40 {
		t.Fatalf("exec task usage %+v", u)
	}
	writeFake(t, filepath.Join(Root, "cpu/nomad/a1.web/cgroup.procs"), "4299")
	if _, err := UsageOf("/nomad/a1.web"); err == nil {
		t.Fatal("a cgroup whose processes are all gone has no usage to read")
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
