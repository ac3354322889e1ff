package sweep

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
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
	probe, err := ProbeFromMeta(map[string]string{"orchbench_probe_path": "/?n=1", "orchbench_probe_min_bytes": "44", "orchbench_probe_regex": "^The result"})
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
	p2, err := probeFor(st, map[string]string{"orchbench_probe_path": "/?n=1"})
	if err != nil {
		t.Fatal(err)
	}
	if g := p2.Check(ctx, []orchestrator.Endpoint{endpointOf(t, full)}); g.Passed || !strings.Contains(g.Detail, "does not match ^nope") {
		t.Fatalf("the experiment's probe did not replace the pack's: %+v", g)
	}
	if _, err := ProbeFromMeta(map[string]string{}); err == nil {
		t.Fatal("a pack without a probe must be refused")
	}
}

func TestLimitsGate(t *testing.T) {
	ok := orchestrator.Limits{Placement: orchestrator.Placement{Group: "g", Task: "t", DeclaredCores: 0.25, DeclaredMemoryMiB: 256}, EffectiveCores: 0.2496, MemoryLimitMiB: 256}
	if g := LimitsGate([]orchestrator.Limits{ok}); !g.Passed {
		t.Fatalf("equal limits refused: %s", g.Detail)
	}
	wrongCPU := ok
	wrongCPU.EffectiveCores = 0.096
	if g := LimitsGate([]orchestrator.Limits{ok, wrongCPU}); g.Passed || !strings.Contains(g.Detail, "enforces 0.096 cores, the variant declares 0.250") {
		t.Fatalf("wrong quota passed: %+v", g)
	}
	wrongMem := ok
	wrongMem.MemoryLimitMiB = 512
	if g := LimitsGate([]orchestrator.Limits{wrongMem}); g.Passed {
		t.Fatal("wrong memory limit passed")
	}
	if g := LimitsGate(nil); g.Passed {
		t.Fatal("no tasks must not pass")
	}
}

func TestLoadPathGate(t *testing.T) {
	eps := []orchestrator.Endpoint{{Service: "taewa", Address: "127.0.0.1", Port: 2000}}
	if g := LoadPathGate("127.0.0.1:2000", eps); !g.Passed {
		t.Fatal(g.Detail)
	}
	if g := LoadPathGate("127.0.0.1:2222", eps); g.Passed {
		t.Fatal("a target that is not an instance passed")
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

func TestResponsesGateHoldsLoadToTheProbe(t *testing.T) {
	probe := Probe{Path: "/wrk2-api/home-timeline/read?user_id=1&start=0&stop=10"}
	res := &loadgen.Result{Requests: 1000, Endpoints: []loadgen.EndpointResult{
		{Label: "/wrk2-api/home-timeline/read", Count: 600, Bytes: 600 * 11000},
		{Label: "/wrk2-api/post/compose", Count: 100, Bytes: 100 * 120},
	}}
	if g := ResponsesGate(probe, 11700, res); !g.Passed {
		t.Fatalf("full timelines refused: %s", g.Detail)
	}
	res.Endpoints[0].Bytes = 600 * 200 // the empty timelines of the testbed we replace
	if g := ResponsesGate(probe, 11700, res); g.Passed || !strings.Contains(g.Detail, "less than half the probe's 11700") {
		t.Fatalf("empty timelines passed: %+v", g)
	}
	res.Endpoints[0].Bytes = 600 * 11000
	res.Errors.Status = 20
	if g := ResponsesGate(probe, 11700, res); g.Passed || !strings.Contains(g.Detail, "20 of 1000 responses were not 2xx/3xx") {
		t.Fatalf("2 %% errors passed: %+v", g)
	}
	// "GET /" labels of single-path loads match a probe on "/?n=..."
	taewa := &loadgen.Result{Requests: 10, Endpoints: []loadgen.EndpointResult{{Label: "GET /", Count: 10, Bytes: 10 * 150}}}
	if g := ResponsesGate(Probe{Path: "/?n=1000"}, 44, taewa); !g.Passed || !strings.Contains(g.Detail, "GET / 150 bytes") {
		t.Fatalf("taewa: %+v", g)
	}
}
