package sweep

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/toolload"
)

// jmeterBinary is the launcher of the JMeter home cluster/images/jmeter/home.sh
// assembles (from its cache, else from Maven Central), which the image runs.
func jmeterBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		testenv.Missing(t, "no java on PATH (Debian's openjdk-17-jre-headless)")
	}
	out, err := exec.Command(filepath.Join("..", "..", "cluster", "images", "jmeter", "home.sh")).Output()
	if err != nil {
		testenv.Missing(t, "no JMeter home: cluster/images/jmeter/home.sh: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "bin", "jmeter")
}

// Study 004's plan (experiments/study-004.hcl: 5 threads × 20 loops × its
// five requests, 1 s timeout) run by the real JMeter and by our closed
// loop against the books API: both complete every user's loops, send
// each request as often, get the same answers, and hold every endpoint to
// its opening responses. JMeter runs as the sweep runs a tool locally.
func TestJMeterRunsStudy004sPlan(t *testing.T) {
	bin := jmeterBinary(t)
	spec, err := experiment.ParseFile(filepath.Join("..", "..", "experiments", "study-004.hcl"), experiment.Options{BaseDir: filepath.Join("..", "..")})
	if err != nil {
		t.Fatal(err)
	}
	st := experiment.Plan(spec)[0]
	st.Load.Runner = experiment.RunnerJMeter
	it := st.Load.Iterations
	var typed, posts atomic.Int64
	serve := func() *httptest.Server {
		api := &booksAPI{getByID: map[string]int{}}
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == "POST" {
				posts.Add(1)
				if r.Header.Get("Content-Type") == "application/json" {
					typed.Add(1)
				}
			}
			api.ServeHTTP(w, r)
		}))
	}
	srv := serve()
	req := mustToolRequest(t, st, srv.URL+"/")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runner := LocalToolRunner{Tool: toolload.JMeter{}, Binary: bin}
	jm, raw, run, err := runner.RunObserved(ctx, orchestrator.LoadRequest{Bound: 2 * time.Minute, Tool: req})
	srv.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, orchestrator.Head(raw, 2000))
	}
	if g := gates.IterationsGate(jm, nil, st, runner.Name()); !g.Passed {
		t.Fatalf("iterations gate: %s", g.Detail)
	}
	want := int64(st.Users * it.PerUser())
	if jm.Accounting.Due != want || jm.Accounting.Completed != want || posts.Load() != int64(st.Users*it.Loops) || typed.Load() != posts.Load() {
		t.Errorf("jmeter: %s, %d POSTs (%d as JSON); want %d completed, %d POSTs", jm.Accounting, posts.Load(), typed.Load(), want, st.Users*it.Loops)
	}
	if run.Ended.Sub(run.Started) <= 0 || jm.WallSeconds <= 0 || jm.WallSeconds < jm.DurationSeconds {
		t.Errorf("the run %s to %s, wall %.3f s over a %.3f s window", run.Started, run.Ended, jm.WallSeconds, jm.DurationSeconds)
	}

	srv = serve()
	defer srv.Close()
	ours, err := loadgen.Run(ctx, loadgen.Config{URL: srv.URL, Threads: st.Users, Connections: st.Users, Timeout: st.Load.Timeout,
		ScriptSource: iterationScript(it.Requests), Closed: &loadgen.Closed{Users: st.Users, Iterations: int64(it.PerUser()), TimeoutLatency: true}})
	if err != nil {
		t.Fatal(err)
	}
	if g := gates.IterationsGate(ours, nil, st, "local"); !g.Passed {
		t.Fatalf("ours: %s", g.Detail)
	}
	counts := func(res *loadgen.Result) map[string]int64 {
		m := map[string]int64{}
		for _, e := range res.Endpoints {
			m[e.Label] = e.Completed
		}
		return m
	}
	if j, o := counts(jm), counts(ours); len(j) != len(it.Requests) || !maps.Equal(j, o) {
		t.Errorf("per endpoint, jmeter %v, ours %v", j, o)
	}
	if jm.StatusCodes[201] != ours.StatusCodes[201] || jm.StatusCodes[200] != ours.StatusCodes[200] {
		t.Errorf("status codes: jmeter %v, ours %v", jm.StatusCodes, ours.StatusCodes)
	}
	probe := len(`{"id":2,"title":"The Dispossessed","author":"Ursula K. Le Guin","year":1974}`)
	for name, res := range map[string]*loadgen.Result{"jmeter": jm, "ours": ours} {
		if g := gates.ResponsesGate("/books/2", probe, gates.BodyReferencesFor(nil, res), res); !g.Passed {
			t.Errorf("%s: responses %s", name, g.Detail)
		}
	}
	t.Logf("jmeter: %.1f rps over %.2f s, mean %.2f ms; ours: %.1f rps over %.2f s, mean %.2f ms",
		jm.AchievedRate, jm.DurationSeconds, jm.Latency.Mean/1000, ours.AchievedRate, ours.DurationSeconds, ours.Latency.Mean/1000)
}
