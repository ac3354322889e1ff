package gates

import (
	"fmt"
	"math"
	"strings"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// LimitsGate compares every task's enforced limits with what its variant
// declares. Each declaration is checked both ways: a declared cap must be
// enforced exactly as its CPU mode says, and a declared absence of a cap (0
// cores, 0 MiB) must find none, since an unintended cap changes what is
// measured as much as a missing one.
func LimitsGate(lims []orchestrator.Limits) results.Gate {
	if len(lims) == 0 {
		return results.Gate{Name: Limits, Detail: "no task found to read limits from"}
	}
	var bad, ok []string
	for i, l := range lims {
		problems := append(cpuProblems(l), memoryProblems(l)...)
		problems = append(problems, cpusetOverlaps(l, lims[:i])...)
		if len(problems) > 0 {
			bad = append(bad, problems...)
			continue
		}
		ok = append(ok, fmt.Sprintf("%s: %s, %s", taskName(l), cpuSummary(l), memSummary(l.MemoryLimitBytes)))
	}
	if len(bad) > 0 {
		return results.Gate{Name: Limits, Detail: strings.Join(bad, "; ")}
	}
	return results.Gate{Name: Limits, Passed: true, Detail: strings.Join(ok, "; ")}
}

func taskName(l orchestrator.Limits) string {
	return l.Label()
}

// cpuProblems applies the rule of the task's CPU mode:
//   - quota: a CFS quota equal to the declared cores (±1 %);
//   - cpuset: no quota, and a cpuset of exactly the declared whole cores;
//   - shares, or any mode declaring 0 cores: no quota at all;
//   - unenforced with cores declared: always refused, the cap cannot hold.
//
// In every mode an enclosing cgroup's quota must not cap the task below
// what it is meant to use.
func cpuProblems(l orchestrator.Limits) []string {
	name := taskName(l)
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, name+" "+fmt.Sprintf(format, args...)) }
	declared := l.Declared.Cores
	mode := l.Declared.CPUMode
	if declared == 0 && mode == contract.CPUModeUnenforced {
		mode = contract.CPUModeShares // nothing declared that could go unenforced
	}
	switch mode {
	case contract.CPUModeQuota:
		switch {
		case declared <= 0:
			fail("has cpu_mode quota but declares no cores (orchbench_cores %g): a quota of what?", declared)
		case l.QuotaCores == 0:
			fail("enforces no CFS quota (cgroup %s), the variant declares %.3f cores", l.CgroupPath, declared)
		case !limits.Equal(l.QuotaCores, declared):
			fail("enforces %.3f cores, the variant declares %.3f (%s)", l.QuotaCores, declared, quotaText(l))
		}
	case contract.CPUModeCPUSet:
		if declared < 1 || declared != math.Trunc(declared) {
			fail("has cpu_mode cpuset but declares %g cores: a cpuset holds whole cores", declared)
			break
		}
		if l.QuotaCores > 0 {
			fail("enforces %s (%.3f cores) on top of its cpuset; the variant declares an exclusive cpuset of %g cores and no quota", quotaText(l), l.QuotaCores, declared)
		}
		switch {
		case l.CPUSet == "":
			fail("is in no cpuset (cgroup %s), the variant declares an exclusive cpuset of %g cores", l.CgroupPath, declared)
		case float64(l.CPUSetSize) != declared:
			fail("runs on cpuset %q of %d CPUs, the variant declares %g cores", l.CPUSet, l.CPUSetSize, declared)
		}
	case contract.CPUModeShares:
		if declared != 0 {
			fail("has cpu_mode shares, which caps nothing, but declares a cap of %g cores (orchbench_cores)", declared)
		}
		if l.QuotaCores > 0 {
			fail("enforces %s (%.3f cores), the variant declares no CPU cap", quotaText(l), l.QuotaCores)
		}
	case contract.CPUModeUnenforced:
		fail("declares %.3f cores with cpu_mode unenforced: its driver only reserves fractional cores, so the cap cannot hold and the step would run uncapped", declared)
	default:
		fail("has cpu_mode %q, so there is no telling how its CPU should be enforced (valid: quota, shares, cpuset, unenforced)", l.Declared.CPUMode)
	}
	if l.AncestorQuotaCores > 0 {
		// the most the task is meant to be able to use
		want := declared
		if mode == contract.CPUModeShares {
			want = float64(l.CPUSetSize) // all of its CPUs; with no cpuset, any quota caps
		}
		if want == 0 || l.AncestorQuotaCores < want*0.99 {
			fail("is capped at %.3f cores by the CFS quota of its enclosing cgroup %s", l.AncestorQuotaCores, l.AncestorQuotaCgroup)
		}
	}
	return bad
}

// quotaText names the quota as the kernel holds it.
func quotaText(l orchestrator.Limits) string {
	return fmt.Sprintf("a CFS quota of %d µs per %d µs period", l.CFSQuotaUS, l.CFSPeriodUS)
}

// memoryProblems: the hard limit must be exactly the declared MiB (for the
// unlimited variant that is memory_max, the burst ceiling, not the
// reservation); a declared 0 means no hard limit may be enforced. An
// enclosing cgroup's limit below that ceiling caps the task as well.
func memoryProblems(l orchestrator.Limits) []string {
	name := taskName(l)
	var bad []string
	declared := int64(l.Declared.MemoryMiB) << 20
	switch {
	case declared == 0 && l.MemoryLimitBytes != 0:
		bad = append(bad, fmt.Sprintf("%s enforces a memory limit of %s (cgroup %s), the variant declares none", name, memSummary(l.MemoryLimitBytes), l.MemoryCgroupPath))
	case declared > 0 && l.MemoryLimitBytes == 0:
		bad = append(bad, fmt.Sprintf("%s enforces no memory limit (cgroup %s), the variant declares %d MiB", name, l.MemoryCgroupPath, l.Declared.MemoryMiB))
	case l.MemoryLimitBytes != declared:
		bad = append(bad, fmt.Sprintf("%s enforces %s, the variant declares %d MiB", name, memSummary(l.MemoryLimitBytes), l.Declared.MemoryMiB))
	}
	if a := l.AncestorMemoryLimitBytes; a > 0 && (declared == 0 || a < declared) {
		bad = append(bad, fmt.Sprintf("%s is limited to %s by its enclosing cgroup %s, below the declared %d MiB", name, memSummary(a), l.AncestorMemoryCgroup, l.Declared.MemoryMiB))
	}
	return bad
}

func memSummary(b int64) string {
	switch {
	case b == 0:
		return "no memory limit"
	case b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d bytes", b)
}

func cpuSummary(l orchestrator.Limits) string {
	s := "no CPU quota"
	if l.QuotaCores > 0 {
		s = fmt.Sprintf("%.3g cores (%s)", l.QuotaCores, quotaText(l))
	}
	if l.CPUSet != "" {
		s += fmt.Sprintf(", cpuset %s", l.CPUSet)
	}
	return string(l.Declared.CPUMode) + ": " + s
}

// cpusetOverlaps: a cpuset task's cores are exclusive only if no other task
// on its node may run on them; earlier holds the tasks already seen, so each
// overlap is reported once.
func cpusetOverlaps(l orchestrator.Limits, earlier []orchestrator.Limits) []string {
	var bad []string
	for _, o := range earlier {
		if o.Node != l.Node || (l.Declared.CPUMode != contract.CPUModeCPUSet && o.Declared.CPUMode != contract.CPUModeCPUSet) {
			continue
		}
		if shared := sharedCPUs(l.CPUSet, o.CPUSet); shared != "" {
			bad = append(bad, fmt.Sprintf("%s and %s share CPUs %s, though a cpuset task's cores are meant to be exclusive", taskName(o), taskName(l), shared))
		}
	}
	return bad
}

// sharedCPUs lists the CPUs two tasks' cpusets have in common. A task in no
// cpuset may run on every CPU, so it shares all of the other's. An
// unparsable cpuset is left to cpuProblems.
func sharedCPUs(a, b string) string {
	if a == "" {
		a, b = b, a
	}
	ca, errA := limits.ParseCPUList(a)
	if errA != nil {
		return ""
	}
	cb := ca
	if b != "" {
		var errB error
		if cb, errB = limits.ParseCPUList(b); errB != nil {
			return ""
		}
	}
	in := map[int]bool{}
	for _, c := range ca {
		in[c] = true
	}
	var both []string
	for _, c := range cb {
		if in[c] {
			both = append(both, fmt.Sprint(c))
		}
	}
	return strings.Join(both, ",")
}
