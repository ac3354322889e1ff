package sweep

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// Study 004's JMeter plan on our closed loop: 5 threads × 4 loops × a
// sequence of 3 requests, one of which outlives the 200 ms timeout. Every
// user runs the sequence in order; a timeout is an error and is recorded
// at the timeout in the latency.
func TestIterationsRunTheSequence(t *testing.T) {
	var slow, get, post atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/cpu-intensive":
			slow.Add(1)
			time.Sleep(400 * time.Millisecond)
		case r.Method == "POST":
			post.Add(1)
			if r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "no content type", 400)
				return
			}
		default:
			get.Add(1)
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	reqs := []experiment.Request{{Method: "POST", Path: "/books", Body: `{"title":"a"}`, ContentType: "application/json"}, {Method: "GET", Path: "/books"}, {Method: "GET", Path: "/cpu-intensive"}}
	st := experiment.Step{Users: 5, Duration: time.Minute, Load: experiment.Load{Kind: experiment.LoadIterations, Timeout: 200 * time.Millisecond,
		Iterations: &experiment.Iterations{Loops: 4, Requests: reqs}}}
	args := strings.Join(iterationArgs(st), " ")
	if args != "--closed -c 5 --iterations 12 --timeout-latency" {
		t.Fatalf("flags %q", args)
	}
	res, err := loadgen.Run(context.Background(), loadgen.Config{URL: srv.URL + "/", Threads: 5, Connections: 5, Duration: time.Minute, Timeout: st.Load.Timeout,
		ScriptSource: iterationScript(reqs), Closed: &loadgen.Closed{Iterations: 12, TimeoutLatency: true}})
	if err != nil {
		t.Fatal(err)
	}
	if g := gates.IterationsGate(res, nil, st, "local"); !g.Passed {
		t.Fatalf("iterations gate: %s", g.Detail)
	}
	if post.Load() != 20 || get.Load() != 20 || slow.Load() != 20 {
		t.Errorf("server saw %d POST, %d GET /books, %d slow; want 20 each", post.Load(), get.Load(), slow.Load())
	}
	a := res.Accounting
	if a.Timeouts != 20 || a.Completed != 40 || a.Due != 60 {
		t.Errorf("accounting %s; want the 20 slow requests timed out", a)
	}
	var p99 int64
	for _, p := range res.Latency.Percentiles {
		if p.Percentile == 99 {
			p99 = p.Value
		}
	}
	// a third of the requests are timeouts, recorded at 200 ms
	if p99 < 195_000 || p99 > 205_000 {
		t.Errorf("p99 %d us, want the 200 ms timeout", p99)
	}
	// the step is judged on errors: a third timed out
	sr := results.StepResult{}
	measurement(&sr, res)
	if sr.ErrorRatio() < 0.33 || sr.ErrorRatio() > 0.34 {
		t.Errorf("error ratio %.3f, want 1/3", sr.ErrorRatio())
	}
}
