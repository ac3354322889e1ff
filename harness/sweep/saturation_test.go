package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// From the cgroup's counters to the judgment: a task with its own CFS
// quota carries it into TaskCPU, so its throttled periods count.
func TestSaturationFromSampledCgroupCounters(t *testing.T) {
	t0 := time.Now()
	lims := []orchestrator.Limits{{Instance: orchestrator.Instance{ID: "a1", Task: "api", Declared: contract.Task{Cores: 1}},
		EffectiveCores: 0.5, QuotaCores: 0.5, CgroupPath: "unused"}}
	done := make(chan struct{})
	close(done)
	counters := func(throttled int64) *cpuSampler {
		return &cpuSampler{lims: lims, stop: make(chan struct{}), done: done, samples: [][]limits.Usage{{
			{At: t0},
			{At: t0.Add(10 * time.Second), CPU: 4900 * time.Millisecond, Periods: 100, Throttled: throttled},
		}}}
	}
	eps := []orchestrator.Endpoint{{Instance: "a1"}}
	cpu := counters(85).finish(t0, t0.Add(10*time.Second))
	if len(cpu) != 1 || cpu[0].QuotaCores != 0.5 || cpu[0].ThrottledRatio != 0.85 {
		t.Fatalf("%+v", cpu)
	}
	if u := gates.ServiceUseOf(cpu, eps); !u.Saturated(gates.SaturatedShare) {
		t.Fatalf("98 %% of the quota, throttled in 85 %% of periods, not saturated: %s", u)
	}
	cpu = counters(10).finish(t0, t0.Add(10*time.Second))
	if u := gates.ServiceUseOf(cpu, eps); u.Saturated(gates.SaturatedShare) || !strings.Contains(u.String(), "throttled in 10 % of CFS periods") {
		t.Fatalf("throttled in 10 %% of periods, saturated: %s", u)
	}
}
