package gates

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

const mib = int64(1) << 20

// dockerQuota is a correctly enforced baseline task at resource_scale 0.25:
// Nomad's integer MHz leave the quota a little under the declared cores.
func dockerQuota() orchestrator.Limits {
	return orchestrator.Limits{
		Instance: orchestrator.Instance{ID: "aaaaaaaa-0000-0000-0000-000000000001", Group: "taewa", Task: "taewa", Node: "n1",
			Driver: "docker", Declared: contract.Task{Cores: 0.25, MemoryMiB: 256, CPUMode: contract.CPUModeQuota}},
		QuotaCores: 0.2496, CFSQuotaUS: 24960, CFSPeriodUS: 100000, EffectiveCores: 0.2496, CPUSet: "0-1", CPUSetSize: 2,
		MemoryLimitBytes: 256 * mib, MemoryLimitMiB: 256, CgroupPath: "/docker/c1", MemoryCgroupPath: "/docker/c1", CgroupVersion: 1,
	}
}

// dockerUnlimited is the unlimited variant as it should run: no quota, the
// memory ceiling at memory_max (8 × 256 MiB).
func dockerUnlimited() orchestrator.Limits {
	l := dockerQuota()
	l.Declared = contract.Task{Cores: 0, MemoryMiB: 2048, CPUMode: contract.CPUModeShares}
	l.QuotaCores, l.CFSQuotaUS, l.EffectiveCores = 0, -1, 2
	l.MemoryLimitBytes, l.MemoryLimitMiB = 2048*mib, 2048
	return l
}

// execCPUSet is an exec task holding two whole cores as its cpuset.
func execCPUSet() orchestrator.Limits {
	return orchestrator.Limits{
		Instance: orchestrator.Instance{ID: "bbbbbbbb-0000-0000-0000-000000000002", Group: "taewa", Task: "taewa", Node: "n1",
			Driver: "exec", Declared: contract.Task{Cores: 2, MemoryMiB: 1024, CPUMode: contract.CPUModeCPUSet}},
		QuotaCores: 0, CFSQuotaUS: -1, CFSPeriodUS: 100000, EffectiveCores: 2, CPUSet: "2-3", CPUSetSize: 2,
		MemoryLimitBytes: 1024 * mib, MemoryLimitMiB: 1024, CgroupPath: "/nomad/bbbbbbbb-0000-0000-0000-000000000002.taewa", CgroupVersion: 1,
	}
}

func with(l orchestrator.Limits, change func(*orchestrator.Limits)) orchestrator.Limits {
	change(&l)
	return l
}

func TestLimitsGateRules(t *testing.T) {
	cases := []struct {
		name string
		lims []orchestrator.Limits
		pass bool
		want []string // each must appear in the detail
	}{
		// setups that are right
		{"quota as declared, within Nomad's MHz rounding", []orchestrator.Limits{dockerQuota()}, true,
			[]string{"taewa/taewa (instance aaaaaaaa): quota: 0.25 cores (a CFS quota of 24960 µs per 100000 µs period), cpuset 0-1, 256 MiB"}},
		{"unlimited: no quota, memory at memory_max", []orchestrator.Limits{dockerUnlimited()}, true,
			[]string{"shares: no CPU quota, cpuset 0-1, 2048 MiB"}},
		{"exclusive cpuset next to a quota task on the shared cores", []orchestrator.Limits{dockerQuota(), execCPUSet()}, true,
			[]string{"cpuset: no CPU quota, cpuset 2-3, 1024 MiB"}},
		{"overlapping cpusets on different nodes", []orchestrator.Limits{dockerQuota(), with(execCPUSet(), func(l *orchestrator.Limits) {
			l.CPUSet, l.Node = "0-1", "n2"
		})}, true, nil},
		{"enclosing quota above the task's own", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) {
			l.AncestorQuotaCores, l.AncestorQuotaCgroup = 2, "/docker"
		})}, true, nil},
		{"unlimited under an enclosing quota that covers its whole cpuset", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) {
			l.AncestorQuotaCores, l.AncestorQuotaCgroup = 2, "/docker"
		})}, true, nil},

		// CPU: declared 0 must find no quota
		{"unlimited with a quota forced on it", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) {
			l.QuotaCores, l.CFSQuotaUS = 0.5, 50000
		})}, false, []string{"taewa/taewa (instance aaaaaaaa) enforces a CFS quota of 50000 µs per 100000 µs period (0.500 cores), the variant declares no CPU cap"}},
		{"unlimited capped by an enclosing cgroup", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) {
			l.AncestorQuotaCores, l.AncestorQuotaCgroup = 1, "/docker"
		})}, false, []string{"is capped at 1.000 cores by the CFS quota of its enclosing cgroup /docker"}},
		{"no cap declared, in no cpuset, under any enclosing quota", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) {
			l.CPUSet, l.CPUSetSize, l.AncestorQuotaCores, l.AncestorQuotaCgroup = "", 0, 64, "/big"
		})}, false, []string{"capped at 64.000 cores", "/big"}},
		{"cpu_mode unenforced with nothing declared is no cap, and a quota still fails it", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) {
			l.Declared.CPUMode, l.QuotaCores, l.CFSQuotaUS = contract.CPUModeUnenforced, 1, 100000
		})}, false, []string{"the variant declares no CPU cap"}},

		// CPU: a declared quota must be there and right
		{"quota declared but none enforced", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) {
			l.QuotaCores, l.CFSQuotaUS, l.EffectiveCores = 0, -1, 2
		})}, false, []string{"enforces no CFS quota (cgroup /docker/c1), the variant declares 0.250 cores"}},
		{"quota declared, none enforced, cpuset size equal to the declared cores", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) {
			l.Declared.Cores, l.QuotaCores, l.CFSQuotaUS, l.EffectiveCores = 2, 0, -1, 2
		})}, false, []string{"enforces no CFS quota", "declares 2.000 cores"}},
		{"wrong quota", []orchestrator.Limits{dockerQuota(), with(dockerQuota(), func(l *orchestrator.Limits) {
			l.QuotaCores, l.CFSQuotaUS = 0.096, 9600
		})}, false, []string{"enforces 0.096 cores, the variant declares 0.250 (a CFS quota of 9600 µs per 100000 µs period)"}},
		{"enclosing quota below the declared cores", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) {
			l.AncestorQuotaCores, l.AncestorQuotaCgroup = 0.1, "/docker"
		})}, false, []string{"capped at 0.100 cores by the CFS quota of its enclosing cgroup /docker"}},

		// CPU: a cpuset must be exactly the declared cores, exclusive and unthrottled
		{"cpuset of the wrong size", []orchestrator.Limits{with(execCPUSet(), func(l *orchestrator.Limits) { l.CPUSet, l.CPUSetSize = "0-3", 4 })}, false,
			[]string{`runs on cpuset "0-3" of 4 CPUs, the variant declares 2 cores`}},
		{"cpuset with a quota on top", []orchestrator.Limits{with(execCPUSet(), func(l *orchestrator.Limits) {
			l.QuotaCores, l.CFSQuotaUS = 1, 100000
		})}, false, []string{"enforces a CFS quota of 100000 µs per 100000 µs period (1.000 cores) on top of its cpuset"}},
		{"cpuset declared, in no cpuset", []orchestrator.Limits{with(execCPUSet(), func(l *orchestrator.Limits) { l.CPUSet, l.CPUSetSize = "", 0 })}, false,
			[]string{"is in no cpuset (cgroup /nomad/bbbbbbbb-0000-0000-0000-000000000002.taewa)"}},
		{"cpuset shared with another task on the node", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) { l.CPUSet = "0-2" }), execCPUSet()}, false,
			[]string{"taewa/taewa (instance aaaaaaaa) and taewa/taewa (instance bbbbbbbb) share CPUs 2"}},
		{"cpuset task next to a task in no cpuset", []orchestrator.Limits{execCPUSet(), with(dockerQuota(), func(l *orchestrator.Limits) { l.CPUSet, l.CPUSetSize = "", 0 })}, false,
			[]string{"share CPUs 2,3"}},
		{"cpuset of fractional cores", []orchestrator.Limits{with(execCPUSet(), func(l *orchestrator.Limits) { l.Declared.Cores = 0.5 })}, false,
			[]string{"has cpu_mode cpuset but declares 0.5 cores"}},

		// CPU: declarations that cannot hold
		{"fractional cores on exec: unenforced", []orchestrator.Limits{with(execCPUSet(), func(l *orchestrator.Limits) {
			l.Declared.Cores, l.Declared.CPUMode, l.CPUSet, l.CPUSetSize = 0.25, contract.CPUModeUnenforced, "0-1", 2
		})}, false, []string{"declares 0.250 cores with cpu_mode unenforced"}},
		{"no CPU mode", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) { l.Declared.CPUMode = "" })}, false,
			[]string{`has cpu_mode ""`}},
		{"shares with a cap declared", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) { l.Declared.Cores = 1 })}, false,
			[]string{"has cpu_mode shares, which caps nothing, but declares a cap of 1 cores"}},
		{"quota mode with no cores declared", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) { l.Declared.Cores = 0 })}, false,
			[]string{"has cpu_mode quota but declares no cores"}},

		// memory: the hard limit must be exactly the declared ceiling
		{"wrong memory limit", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) { l.MemoryLimitBytes, l.MemoryLimitMiB = 512*mib, 512 })}, false,
			[]string{"enforces 512 MiB, the variant declares 256 MiB"}},
		{"memory off by less than a MiB", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) { l.MemoryLimitBytes += 4096 })}, false,
			[]string{"enforces 268439552 bytes, the variant declares 256 MiB"}},
		{"unlimited with memory_max not honoured: the reservation became the limit", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) {
			l.MemoryLimitBytes, l.MemoryLimitMiB = 256*mib, 256
		})}, false, []string{"enforces 256 MiB, the variant declares 2048 MiB"}},
		{"memory declared, none enforced", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) { l.MemoryLimitBytes, l.MemoryLimitMiB = 0, 0 })}, false,
			[]string{"enforces no memory limit (cgroup /docker/c1), the variant declares 256 MiB"}},
		{"no memory limit declared, one enforced", []orchestrator.Limits{with(dockerQuota(), func(l *orchestrator.Limits) { l.Declared.MemoryMiB = 0 })}, false,
			[]string{"enforces a memory limit of 256 MiB (cgroup /docker/c1), the variant declares none"}},
		{"enclosing memory limit below the declared", []orchestrator.Limits{with(dockerUnlimited(), func(l *orchestrator.Limits) {
			l.AncestorMemoryLimitBytes, l.AncestorMemoryCgroup = 1024*mib, "/docker"
		})}, false, []string{"is limited to 1024 MiB by its enclosing cgroup /docker, below the declared 2048 MiB"}},

		{"nothing to check", nil, false, []string{"no task found"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := LimitsGate(c.lims)
			if g.Name != Limits {
				t.Fatalf("gate named %q", g.Name)
			}
			if g.Passed != c.pass {
				t.Fatalf("passed = %v, want %v: %s", g.Passed, c.pass, g.Detail)
			}
			for _, w := range c.want {
				if !strings.Contains(g.Detail, w) {
					t.Errorf("detail %q\ndoes not say %q", g.Detail, w)
				}
			}
		})
	}
}

// A failing task must not hide behind a passing one, nor drag the passing
// one into the complaint.
func TestLimitsGateNamesOnlyTheFailingTask(t *testing.T) {
	good := dockerQuota()
	bad := with(dockerUnlimited(), func(l *orchestrator.Limits) {
		l.ID, l.Task, l.QuotaCores, l.CFSQuotaUS = "cccccccc-0000-0000-0000-000000000003", "redis", 1, 100000
	})
	g := LimitsGate([]orchestrator.Limits{good, bad})
	if g.Passed || !strings.Contains(g.Detail, "taewa/redis (instance cccccccc)") || strings.Contains(g.Detail, "alloc aaaaaaaa") {
		t.Fatalf("%+v", g)
	}
}
