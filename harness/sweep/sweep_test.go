package sweep

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

func endpointOf(t *testing.T, srv *httptest.Server) orchestrator.Endpoint {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	return orchestrator.Endpoint{Service: "app", Address: u.Hostname(), Port: port}
}

func TestProbeRefusesEmptyAndWrongAnswers(t *testing.T) {
	full := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("The result of this run is :  249.123456789012"))
	}))
	defer full.Close()
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("[]")) }))
	defer empty.Close()
	app, err := contract.ParseApp(&api.Job{Meta: map[string]string{"orchbench_probe_path": "/?n=1", "orchbench_probe_min_bytes": "44", "orchbench_probe_regex": "^The result"}})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := probeFor(experiment.Step{}, app)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if g := probe.Check(ctx, []orchestrator.Endpoint{endpointOf(t, full)}); !g.Passed {
		t.Fatalf("a full answer failed: %s", g.Detail)
	}
	// one empty instance among good ones is enough to refuse the measurement
	g := probe.Check(ctx, []orchestrator.Endpoint{endpointOf(t, full), endpointOf(t, empty)})
	if g.Passed || !strings.Contains(g.Detail, "2 bytes, want at least 44") {
		t.Fatalf("an empty instance passed: %+v", g)
	}
	st := experiment.Step{Probe: &experiment.Probe{Path: "/", Status: 200, Regex: "^nope"}}
	p2, err := probeFor(st, app)
	if err != nil {
		t.Fatal(err)
	}
	if g := p2.Check(ctx, []orchestrator.Endpoint{endpointOf(t, full)}); g.Passed || !strings.Contains(g.Detail, "does not match ^nope") {
		t.Fatalf("the experiment's probe did not replace the pack's: %+v", g)
	}
	if _, err := probeFor(experiment.Step{}, contract.App{}); err == nil {
		t.Fatal("a pack without a probe must be refused")
	}
}

func TestLoadArgsAllowOnlyTheDeploymentsInstances(t *testing.T) {
	rec := &results.SweepRecord{Seed: 1}
	st := experiment.Step{OfferedRPS: 100, Duration: 5 * time.Second, Load: experiment.Load{Threads: 2, Connections: 8, Distribution: "exp"}}
	eps := []orchestrator.Endpoint{{Address: "10.0.0.5", Port: 80}, {Address: "10.0.0.6", Port: 80}, {Address: "127.0.0.1", Port: 81}}
	args := strings.Join(loadArgs(rec, st, eps), " ")
	for _, want := range []string{"-R 100", "-D exp", "--allow-host 10.0.0.5", "--allow-host 10.0.0.6", "--hosts 10.0.0.5:80,10.0.0.6:80,127.0.0.1:81"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--allow-host 127.0.0.1") {
		t.Errorf("loopback needs no allowance: %q", args)
	}
}

// The same step on two orchestrators sends the same requests; another
// repetition, level or variant sends others.
func TestLoadSeedIgnoresTheOrchestrator(t *testing.T) {
	st := experiment.Step{App: "social-network", Orchestrator: "nomad", Variant: "baseline", OfferedRPS: 40, Rep: 2, Index: 3}
	other := st
	other.Orchestrator, other.Index = "swarm", 17
	if loadSeed(7, st) != loadSeed(7, other) {
		t.Error("the orchestrator or the plan position changed the load")
	}
	for _, change := range []func(*experiment.Step){
		func(s *experiment.Step) { s.Rep = 3 },
		func(s *experiment.Step) { s.OfferedRPS = 80 },
		func(s *experiment.Step) { s.Variant = "vertical" },
	} {
		c := st
		change(&c)
		if loadSeed(7, c) == loadSeed(7, st) {
			t.Errorf("%+v has the same seed as %+v", c, st)
		}
	}
	if loadSeed(7, st) == loadSeed(8, st) {
		t.Error("the sweep's seed does not reach the load")
	}
}

// The load keeps its connections open, so the latency Little's law is
// judged by is the probe's answer on an open connection: a server slow only
// on a connection's first request (a dial, a cold handler) must not make a
// step with enough connections invalid.
func TestProbeLatencyIsTakenOnAnOpenConnection(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !seen[r.RemoteAddr]
		seen[r.RemoteAddr] = true
		mu.Unlock()
		if first {
			time.Sleep(300 * time.Millisecond)
		}
		w.Write([]byte("The result of this run is :  249.123456789012"))
	}))
	defer srv.Close()
	probe := Probe{Path: "/", Status: 200}
	g, seenBy := probe.check(context.Background(), []orchestrator.Endpoint{endpointOf(t, srv)})
	if !g.Passed || seenBy.Slowest >= 300*time.Millisecond || !strings.Contains(g.Detail, "on an open connection") {
		t.Fatalf("the first request's 300 ms became the unloaded latency: %v, %+v", seenBy.Slowest, g)
	}
	if little := gates.LittleGate(gates.LittleCheckOf(4, 400, seenBy.Slowest)); !little.Passed {
		t.Fatalf("4 connections at a warm latency well under 10 ms refused for 400 rps: %+v", little)
	}
	if little := gates.LittleGate(gates.LittleCheckOf(4, 400, 300*time.Millisecond)); little.Passed {
		t.Fatalf("the cold latency would have made it invalid, so this test shows nothing: %+v", little)
	}
}
