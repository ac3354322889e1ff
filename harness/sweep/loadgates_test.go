package sweep

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// Every check of the load run, made to fail on a deliberately wrong result
// and to pass on a right one. The integration tests make the same checks
// fail on a real cluster (test/integration/validity_test.go).

func TestLoadPathGateReadsTheWire(t *testing.T) {
	eps := []orchestrator.Endpoint{{Service: "taewa", Address: "127.0.0.1", Port: 2000}, {Service: "taewa", Address: "127.0.0.1", Port: 2001}}
	direct := []loadgen.Peer{{Addr: "127.0.0.1:2000", Connections: 8}, {Addr: "127.0.0.1:2001", Connections: 8}}
	if g := LoadPathGate(direct, eps, nil); !g.Passed || !strings.Contains(g.Detail, "127.0.0.1:2001 (taewa, 8 connections)") {
		t.Fatalf("direct load refused: %+v", g)
	}
	// the generator was aimed at a registered address, but a forwarder
	// (or a script's own address) is what the sockets reached
	proxied := []loadgen.Peer{{Addr: "127.0.0.1:2000", Connections: 8}, {Addr: "127.0.0.1:39999", Connections: 8}}
	g := LoadPathGate(proxied, eps, nil)
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, "127.0.0.1:39999 (8 connections), which is not a registered instance") {
		t.Fatalf("a proxy in the path passed: %+v", g)
	}
	if g := LoadPathGate(nil, eps, nil); !g.NotChecked || g.Passed {
		t.Fatalf("no connection at all must say not checked: %+v", g)
	}
}

// A registered address can itself be a relay: Swarm's host-mode publishing
// answers on loopback through docker-proxy, which holds the port and
// forwards to the task. The gate asks who accepted the connections: a
// process of no instance's cgroup is a proxy in the path.
func TestLoadPathGateFindsAUserlandRelay(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	eps := []orchestrator.Endpoint{{Service: "taewa", Address: "127.0.0.1", Port: addr.Port}}
	peers := []loadgen.Peer{{Addr: addr.String(), Connections: 16}}
	instance := map[string]bool{"/docker/0123abcd": true}
	g := LoadPathGate(peers, eps, instance)
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, fmt.Sprintf("connections to %s are accepted by", addr)) ||
		!strings.Contains(g.Detail, fmt.Sprintf("(pid %d,", os.Getpid())) || !strings.Contains(g.Detail, "a userland proxy relays the load") {
		t.Fatalf("a relay holding the registered port passed: %+v", g)
	}
	// the same listener inside an instance's cgroup is the instance itself (host networking)
	own, err := limits.CPUCgroupOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	instance[own] = true
	if g := LoadPathGate(peers, eps, instance); !g.Passed {
		t.Fatalf("an instance listening itself was refused: %+v", g)
	}
}

func TestGeneratorGate(t *testing.T) {
	bound := generatorLagBound(0, experiment.SLO{})
	res := &loadgen.Result{Generator: loadgen.GeneratorStats{LagSamples: 1000, LagP99Us: 300, LagMaxUs: 2000, CPUCores: 0.3}}
	if g := GeneratorGate(res, bound); !g.Passed || !strings.Contains(g.Detail, "(bound 5ms: the default; the SLO has no p99 rule)") {
		t.Fatalf("a generator on time refused: %+v", g)
	}
	res.Generator.LagP99Us = 48_000
	g := GeneratorGate(res, bound)
	if g.Passed || g.Breaks || !strings.Contains(g.Detail, "generator saturated: send lag p99 48ms") {
		t.Fatalf("a saturated generator passed: %+v", g)
	}
	if g := GeneratorGate(&loadgen.Result{}, bound); !g.NotChecked {
		t.Fatalf("nothing sent: %+v", g)
	}
	// 20 sends at 5 rps: their p99 is their maximum, one hiccup
	few := &loadgen.Result{Generator: loadgen.GeneratorStats{LagSamples: 20, LagP99Us: 11_000, LagMaxUs: 11_000}}
	if g := GeneratorGate(few, bound); g.Passed || !g.NotChecked || !strings.Contains(g.Detail, "20 sends") {
		t.Fatalf("too few sends for a p99: %+v", g)
	}
}

// A 3 ms send lag is nothing beside a 200 ms SLO and a third of a 10 ms one.
func TestGeneratorLagBoundFollowsTheSLO(t *testing.T) {
	res := &loadgen.Result{Generator: loadgen.GeneratorStats{LagSamples: 1000, LagP99Us: 3000, LagMaxUs: 4000}}
	if g := GeneratorGate(res, generatorLagBound(0, experiment.SLO{P99Ms: 200})); !g.Passed ||
		!strings.Contains(g.Detail, "(bound 5ms: the default, under 10 % of the SLO's p99 of 200 ms)") {
		t.Fatalf("a lag well under a 200 ms SLO refused: %+v", g)
	}
	g := GeneratorGate(res, generatorLagBound(0, experiment.SLO{P99Ms: 10}))
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, "generator saturated: send lag p99 3ms, max 4ms over 1000 sends") ||
		!strings.Contains(g.Detail, "(bound 1ms: 10 % of the SLO's p99 of 10 ms)") {
		t.Fatalf("a 3 ms lag under a 10 ms SLO passed: %+v", g)
	}
	// the spec's own bound wins over both
	if b := generatorLagBound(20*time.Millisecond, experiment.SLO{P99Ms: 10}); b.Max != 20*time.Millisecond || b.Source != "max_generator_lag in the spec" {
		t.Fatalf("declared bound = %+v", b)
	}
}

func TestCompleteGate(t *testing.T) {
	whole := func() *loadgen.Result {
		return &loadgen.Result{DurationSeconds: 10, WallSeconds: 10.2,
			Accounting: loadgen.Accounting{Due: 100, Completed: 90, Errors: 4, HTTPErrors: 3, SocketErrors: 1, Timeouts: 2, Unsent: 4}}
	}
	if g := CompleteGate(whole(), nil, 10*time.Second, "nomad"); !g.Passed || !strings.Contains(g.Detail, "100 due = 90 completed") {
		t.Fatalf("a whole run refused: %+v", g)
	}
	for name, c := range map[string]struct {
		res  *loadgen.Result
		err  error
		want string
	}{
		"exit status":  {whole(), errors.New("load job x (alloc 1234) task load exited 137 (signal 9)"), "exited 137"},
		"no result":    {nil, nil, "left no result"},
		"interrupted":  {func() *loadgen.Result { r := whole(); r.Interrupted, r.WallSeconds = true, 4; return r }(), nil, "interrupted after 4.0 s of 10.0 s"},
		"short window": {func() *loadgen.Result { r := whole(); r.DurationSeconds = 6; return r }(), nil, "measured 6.0 s of the planned 10.0 s"},
		"unaccounted":  {func() *loadgen.Result { r := whole(); r.Accounting.Due = 120; return r }(), nil, "120 due != 90 completed"},
	} {
		g := CompleteGate(c.res, c.err, 10*time.Second, "nomad")
		if g.Passed || g.Breaks || !strings.Contains(g.Detail, c.want) {
			t.Errorf("%s: %+v, want a failure naming %q", name, g, c.want)
		}
	}
}

func TestSLOGateBreaksNotInvalidates(t *testing.T) {
	slo := experiment.SLO{P99Ms: 100, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}
	ok := results.StepResult{Labels: results.Labels{OfferedRPS: 100}, DueRPS: 100, AchievedRPS: 99, Requests: 1000, Errors: 5, Corrected: results.Latency{P99: 20}}
	if g := SLOGate(ok, slo); !g.Passed {
		t.Fatalf("%+v", g)
	}
	// 5 % of answers were 503: the application failed, a measurement
	errs := ok
	errs.Errors = 50
	g := SLOGate(errs, slo)
	if g.Passed || !g.Breaks || !strings.Contains(g.Detail, "error ratio 0.0500 > 0.01") {
		t.Fatalf("503s: %+v", g)
	}
	sr := results.StepResult{Gates: []results.Gate{{Name: GateHealthy, Passed: true}, g}}
	sr.Decide()
	if sr.Outcome != results.OutcomeBroken {
		t.Fatalf("a step with 5 %% errors is %s, want broken", sr.Outcome)
	}
}

func TestLittleGate(t *testing.T) {
	// 8 connections at 10 ms carry 800 rps
	g := LittleGate(littleCheck(8, 500, 10*time.Millisecond))
	if g.Name != GateLittle || !g.Passed || !strings.Contains(g.Detail, "8 connections at the unloaded latency of 10.0 ms carry up to 800 rps, at least the 500 offered") {
		t.Fatalf("%+v", g)
	}
	// too few connections: the generator's queue, not the application, is
	// measured, so the step is invalid (no Breaks), not broken
	g = LittleGate(littleCheck(8, 1000, 10*time.Millisecond))
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, "8 connections at the unloaded latency of 10.0 ms carry at most 800 rps, less than the 1000 offered") {
		t.Fatalf("%+v", g)
	}
	sr := results.StepResult{Gates: []results.Gate{g}}
	if sr.Decide(); sr.Outcome != results.OutcomeInvalid {
		t.Fatalf("a step short of connections is %s, want invalid", sr.Outcome)
	}
	if g := LittleGate(littleCheck(8, 1000, 0)); g.Passed || !g.NotChecked || !strings.Contains(g.Detail, "no unloaded latency") {
		t.Fatalf("no latency known, no verdict: %+v", g)
	}
	if g := closedLittleGate(5); g.Passed || !g.NotChecked || !strings.Contains(g.Detail, "closed loop: each of the 5 users waits") {
		t.Fatalf("closed loop: %+v", g)
	}
}
