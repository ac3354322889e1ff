package vmpush

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

func TestExpositionFormat(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	st := experiment.Step{ID: "taewa-nomad-vertical-r400-rep2", App: "taewa", Orchestrator: "nomad", Variant: "vertical", OfferedRPS: 400, Rep: 2}
	r := fakeResult("sw", st, start)
	r.Gates = append(r.Gates, results.Gate{Name: "probe\nline", Passed: false})
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	r.Metadata["shipping"] = results.Shipping{Mode: "on", Cores: 0.025}
	text := string(Exposition(r))
	base := `sweep="sw",step="taewa-nomad-vertical-r400-rep2",app="taewa",orchestrator="nomad",variant="vertical",offered_rps="400",rep="2"`
	for _, want := range []string{
		`orchbench_step_achieved_rps{` + base + `} 396 1700000008000` + "\n",
		`orchbench_step_offered_rps{` + base + `} 400 1700000008000`,
		`orchbench_step_latency_ms{` + base + `,kind="corrected",quantile="0.99"} 40 1700000008000`,
		`orchbench_step_latency_ms{` + base + `,kind="uncorrected",quantile="1"} 6 1700000008000`,
		`orchbench_step_valid{` + base + `} 1 1700000008000`,
		`orchbench_step_agent_cores{` + base + `,shipping="on"} 0.025 1700000008000`,
		`orchbench_step_bytes_per_response{` + base + `} 100 1700000008000`,
		`orchbench_step_gate_passed{` + base + `,gate="probe\nline"} 0 `,
		`orchbench_endpoint_latency_ms{` + base + `,endpoint="/api/\"quoted\"\\path",quantile="0.99"} 3 `,
		`orchbench_step_responses_total{` + base + `,code="503"} 1 `,
		`orchbench_second_achieved_rps{` + base + `} 399 1700000001000`,
		`orchbench_second_latency_ms{` + base + `,quantile="0.99"} 3 1700000001000`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	// Every line is name{labels} value timestamp.
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		i := strings.LastIndex(line, "} ")
		if i < 0 || len(strings.Fields(line[i+2:])) != 2 {
			t.Fatalf("malformed line %q", line)
		}
	}
}

// fakeVM records the bodies it accepts, failing the first `fail` requests.
type fakeVM struct {
	mu     sync.Mutex
	fail   int
	status int
	calls  int
	bodies [][]byte
}

func (f *fakeVM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if r.URL.Path != "/api/v1/import/prometheus" || r.Method != http.MethodPost {
		http.Error(w, "wrong endpoint "+r.URL.Path, http.StatusNotFound)
		return
	}
	if f.calls <= f.fail {
		http.Error(w, "try later", f.status)
		return
	}
	b, _ := io.ReadAll(r.Body)
	f.bodies = append(f.bodies, b)
	w.WriteHeader(http.StatusNoContent)
}

func TestPushSweepRetriesAndIsRepeatable(t *testing.T) {
	a, rec := writeTestArchive(t, time.UnixMilli(1_700_000_000_000), 3)
	vm := &fakeVM{fail: 2, status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(vm)
	defer srv.Close()
	before := snapshot(t, a.Dir)

	p := Pusher{URL: srv.URL, Backoff: time.Millisecond}
	steps, _ := a.LoadSteps(rec.ID)
	if _, err := p.PushStep(context.Background(), steps[0]); err != nil {
		t.Fatalf("push with two 503s then success failed: %v", err)
	}
	if vm.calls != 3 {
		t.Fatalf("calls = %d, want 3 (two retries)", vm.calls)
	}
	vm.bodies = nil
	n1, err := PushSweep(context.Background(), a, rec.ID, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	n2, err := PushSweep(context.Background(), a, rec.ID, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if n1 == 0 || n1 != n2 || len(vm.bodies) != 6 {
		t.Fatalf("samples %d then %d, bodies %d", n1, n2, len(vm.bodies))
	}
	for i := 0; i < 3; i++ {
		if !bytes.Equal(vm.bodies[i], vm.bodies[i+3]) {
			t.Fatalf("second push of step %d differs: timestamps must be stable", i)
		}
	}
	if !reflect.DeepEqual(before, snapshot(t, a.Dir)) {
		t.Fatal("push modified the archive")
	}
}

func TestPushFailsWithoutTouchingArchive(t *testing.T) {
	a, rec := writeTestArchive(t, time.UnixMilli(1_700_000_000_000), 2)
	before := snapshot(t, a.Dir)

	bad := &fakeVM{fail: 100, status: http.StatusBadRequest}
	srv := httptest.NewServer(bad)
	defer srv.Close()
	if _, err := PushSweep(context.Background(), a, rec.ID, srv.URL); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("push to a rejecting VM = %v", err)
	}
	if bad.calls != 1 {
		t.Fatalf("a 400 was retried %d times", bad.calls-1)
	}

	down := &fakeVM{fail: 100, status: http.StatusBadGateway}
	srv2 := httptest.NewServer(down)
	defer srv2.Close()
	p := Pusher{URL: srv2.URL, Attempts: 3, Backoff: time.Millisecond}
	steps, _ := a.LoadSteps(rec.ID)
	if _, err := p.PushStep(context.Background(), steps[0]); err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("push to a failing VM = %v", err)
	}
	if down.calls != 3 {
		t.Fatalf("calls = %d, want 3", down.calls)
	}
	if !reflect.DeepEqual(before, snapshot(t, a.Dir)) {
		t.Fatal("failed push modified the archive")
	}
}
