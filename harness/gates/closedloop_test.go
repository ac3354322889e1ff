package gates

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// closedLoopResult is a closed-loop run's result as the generator reports
// it: lagMeanUs and latencyMeanUs set the lag share of a cycle.
func closedLoopResult(sends int64, lagMeanUs, lagP99Us, latencyMeanUs float64, cores float64) *loadgen.Result {
	return &loadgen.Result{
		Generator:          loadgen.GeneratorStats{LagSamples: sends, LagMeanUs: lagMeanUs, LagP99Us: int64(lagP99Us), LagMaxUs: int64(3 * lagP99Us), CPUCores: cores},
		UncorrectedLatency: loadgen.LatencySummary{Count: sends, Mean: latencyMeanUs},
	}
}

var (
	idleService = ServiceUse{Used: 0.6, Limit: 1, Quota: true, Throttled: 0.02}
	// saturatedService spent its CFS quota and was throttled in most periods
	saturatedService = ServiceUse{Used: 0.99, Limit: 1, Quota: true, Throttled: 0.9}
)

// In a closed loop the throughput bound is the share of a cycle the
// generator cost: the same 6 ms lag p99 is nothing beside 500 ms responses
// and a fifth of the rate beside 1 ms ones.
func TestClosedLoopGeneratorGateJudgesTheShareOfACycle(t *testing.T) {
	slow := closedLoopResult(900, 5000, 6000, 500_000, 0.2)
	if g := ClosedLoopGeneratorGate(slow, 0, DefaultMaxClosedLoopLagShare, idleService); !g.Passed || !strings.Contains(g.Detail, "1.0 % of its cycle") {
		t.Fatalf("a 500 ms service refused for a 5 ms lag: %+v", g)
	}
	// think time is part of the cycle the lag is measured against:
	// 250 µs of an 11.25 ms cycle
	fast := closedLoopResult(90_000, 250, 2000, 1000, 1)
	if g := ClosedLoopGeneratorGate(fast, 10*time.Millisecond, DefaultMaxClosedLoopLagShare, idleService); !g.Passed || !strings.Contains(g.Detail, "2.2 % of its cycle") {
		t.Fatalf("250 µs of an 11 ms cycle refused: %+v", g)
	}
	if g := ClosedLoopGeneratorGate(&loadgen.Result{}, 0, DefaultMaxClosedLoopLagShare, idleService); !g.NotChecked || g.Passed {
		t.Fatalf("nothing completed: %+v", g)
	}
}

// Between the throughput bound (5 %) and the latency bound (10 %), a
// service that spent its quota set the pace, and the step stands; one that
// did not, or cannot show it, makes the step invalid.
func TestClosedLoopGeneratorGateSaturatedServiceExcusesThroughputOnly(t *testing.T) {
	// 87 µs of lag beside 1 ms responses: 8.0 % of the cycle
	res := closedLoopResult(60_000, 87, 900, 1000, 0.9)
	g := ClosedLoopGeneratorGate(res, 0, DefaultMaxClosedLoopLagShare, saturatedService)
	if !g.Passed || !strings.Contains(g.Detail, "8.0 % of its cycle") ||
		!strings.Contains(g.Detail, "the service used 99 % of its 1 cores, throttled in 90 % of CFS periods") ||
		!strings.Contains(g.Detail, "set the pace") {
		t.Fatalf("a saturated service refused for an 8 %% lag share: %+v", g)
	}
	g = ClosedLoopGeneratorGate(res, 0, DefaultMaxClosedLoopLagShare, idleService)
	if g.Passed || g.Breaks || g.NotChecked || !strings.Contains(g.Detail, "generator saturated: the generator held each user back 8.0 % of its cycle") ||
		!strings.Contains(g.Detail, "(bound 5 %)") || !strings.Contains(g.Detail, "the service used 60 % of its 1 cores") {
		t.Fatalf("a generator that cost an idle service 8 %% of its rate passed: %+v", g)
	}
	// a service without a quota cannot show it was saturated
	if g := ClosedLoopGeneratorGate(res, 0, DefaultMaxClosedLoopLagShare, ServiceUse{Used: 3}); g.Passed || !strings.Contains(g.Detail, "has no CPU limit") {
		t.Fatalf("an uncapped service excused the lag: %+v", g)
	}
	// 96 % of a CFS quota on average, but throttled in one period of ten:
	// bursts with idle time between them, not a saturated service
	bursty := ServiceUse{Used: 0.96, Limit: 1, Quota: true, Throttled: 0.1}
	g = ClosedLoopGeneratorGate(res, 0, DefaultMaxClosedLoopLagShare, bursty)
	if g.Passed || !strings.Contains(g.Detail, "the service was not saturated: the service used 96 % of its 1 cores, throttled in 10 % of CFS periods") {
		t.Fatalf("a service throttled in 10 %% of periods excused the lag: %+v", g)
	}
	// a cpuset caps without CFS periods: its use alone shows saturation
	if g := ClosedLoopGeneratorGate(res, 0, DefaultMaxClosedLoopLagShare, ServiceUse{Used: 1.97, Limit: 2}); !g.Passed {
		t.Fatalf("a service that filled its cpuset refused: %+v", g)
	}
}

// The acceptance case: a 25 % lag share at a saturated service.
// The service set the throughput, but the users the generator held back
// were missing from its queue, so the latency is wrong: invalid.
func TestClosedLoopGeneratorGateLagPastTheLatencyBoundIsInvalidAtASaturatedService(t *testing.T) {
	// 500 µs mean lag beside 1.5 ms responses: 25 % of each cycle
	res := closedLoopResult(40_000, 500, 4000, 1500, 0.95)
	g := ClosedLoopGeneratorGate(res, 0, DefaultMaxClosedLoopLagShare, saturatedService)
	if g.Passed || g.Breaks || g.NotChecked {
		t.Fatalf("a 25 %% lag share passed at a saturated service: %+v", g)
	}
	for _, want := range []string{"generator saturated", "25.0 % of its cycle", "past the 10 % bound for the latency", "the latency it reports is distorted", "the service used 99 % of its 1 cores"} {
		if !strings.Contains(g.Detail, want) {
			t.Fatalf("detail lacks %q: %s", want, g.Detail)
		}
	}
	// the same lag at an idle service is just as invalid
	if g := ClosedLoopGeneratorGate(res, 0, DefaultMaxClosedLoopLagShare, idleService); g.Passed || !strings.Contains(g.Detail, "distorted") {
		t.Fatalf("a 25 %% lag share passed at an idle service: %+v", g)
	}
	// just under the latency bound the saturated service still excuses it:
	// 105 µs beside 1 ms is 9.5 %
	under := closedLoopResult(40_000, 105, 900, 1000, 0.95)
	if g := ClosedLoopGeneratorGate(under, 0, DefaultMaxClosedLoopLagShare, saturatedService); !g.Passed || !strings.Contains(g.Detail, "9.5 % of its cycle") {
		t.Fatalf("9.5 %% at a saturated service refused: %+v", g)
	}
}

func TestServiceUseCountsOnlyTheMeasuredInstances(t *testing.T) {
	eps := []orchestrator.Endpoint{{Instance: "a1"}, {Instance: "a2"}}
	cpu := []results.TaskCPU{{AllocID: "a1", Cores: 0.5, LimitCores: 0.5}, {AllocID: "a2", Cores: 0.4, LimitCores: 0.5}, {AllocID: "db", Cores: 2}}
	if u := ServiceUseOf(cpu, eps); u.Used != 0.9 || u.Limit != 1 || u.Quota || u.Saturated(SaturatedShare) || !u.Saturated(0.9) {
		t.Fatalf("%+v", u)
	}
	cpu[1].LimitCores = 0
	if u := ServiceUseOf(cpu, eps); u.Limit != 0 || u.Saturated(0.1) {
		t.Fatalf("one uncapped instance: %+v", u)
	}
}

// With CFS quotas the least throttled instance decides: a service is
// saturated only when each instance ran out of quota in most periods.
func TestServiceUseWithQuotasNeedsThrottling(t *testing.T) {
	eps := []orchestrator.Endpoint{{Instance: "a1"}, {Instance: "a2"}}
	cpu := []results.TaskCPU{
		{AllocID: "a1", Cores: 0.49, LimitCores: 0.5, QuotaCores: 0.5, ThrottledRatio: 0.8},
		{AllocID: "a2", Cores: 0.48, LimitCores: 0.5, QuotaCores: 0.5, ThrottledRatio: 0.1},
		{AllocID: "db", Cores: 1, LimitCores: 1, QuotaCores: 1, ThrottledRatio: 0},
	}
	u := ServiceUseOf(cpu, eps)
	if !u.Quota || u.Throttled != 0.1 || u.Used != 0.97 {
		t.Fatalf("%+v", u)
	}
	if u.Saturated(SaturatedShare) {
		t.Fatalf("97 %% of the quota, one instance throttled in 10 %% of periods, counted as saturated: %s", u)
	}
	cpu[1].ThrottledRatio = 0.7
	if u := ServiceUseOf(cpu, eps); !u.Saturated(SaturatedShare) || !strings.Contains(u.String(), "throttled in 70 % of CFS periods") {
		t.Fatalf("both instances throttled in most periods: %+v %s", u, u)
	}
}
