package nomad

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/testutil"
)

// TestConsulMarkers stores, reads and clears markers in the cluster's Consul
// when one answers, else in the test's stand-in for its KV API.
func TestConsulMarkers(t *testing.T) {
	a := &Orchestrator{ConsulAddr: "http://127.0.0.1:8500", HTTP: &http.Client{Timeout: 5 * time.Second}}
	if resp, err := a.HTTP.Get(a.ConsulAddr + "/v1/status/leader"); err == nil && resp.StatusCode == http.StatusOK {
		resp.Body.Close()
		t.Log("against the Consul at 127.0.0.1:8500")
	} else {
		srv := httptest.NewServer(testutil.NewConsulKV())
		defer srv.Close()
		a.ConsulAddr = srv.URL
		t.Log("no Consul at 127.0.0.1:8500: against the stand-in KV")
	}
	ctx := context.Background()
	job := fmt.Sprintf("orchbench-unit-%d", time.Now().UnixNano())
	neighbour := job + "-other"
	defer a.ClearMarkers(ctx, "nomad", job)
	defer a.ClearMarkers(ctx, "nomad", neighbour)
	args := []string{"dsb", "load", "--frontend", "http://{{endpoint}}"}
	old := orchestrator.MarkerPrefix("nomad", job) + "7-0123456789ab"
	key := orchestrator.MarkerPrefix("nomad", job) + "9-0123456789ab"
	other := orchestrator.MarkerPrefix("nomad", neighbour) + "9-0123456789ab"

	if m, err := a.ReadMarker(ctx, key); m != nil || err != nil {
		t.Fatalf("a marker before any was written: %+v, %v", m, err)
	}
	finished := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, k := range []string{old, key, other} {
		if err := a.WriteMarker(ctx, k, orchestrator.SetupMarker{Orchestrator: "nomad", Job: job, Version: 1, Revision: "9", Args: args, Finished: finished, Seconds: 12.5}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := a.ReadMarker(ctx, key)
	if err != nil || m == nil {
		t.Fatalf("written marker not read back: %+v, %v", m, err)
	}
	if !m.Finished.Equal(finished) || !reflect.DeepEqual(m.Args, args) || m.Revision != "9" || m.Seconds != 12.5 {
		t.Errorf("marker read back as %+v", m)
	}
	if err := a.ClearMarkers(ctx, "nomad", job); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{old, key} {
		if m, err := a.ReadMarker(ctx, k); m != nil || err != nil {
			t.Errorf("%s survived clearing the job's markers: %+v, %v", k, m, err)
		}
	}
	// the prefix ends in a slash: a job whose name extends this one's keeps its marker
	if m, err := a.ReadMarker(ctx, other); m == nil || err != nil {
		t.Errorf("clearing %s took %s's marker too: %v", job, neighbour, err)
	}
	if err := a.ClearMarkers(ctx, "nomad", job); err != nil {
		t.Errorf("clearing no markers: %v", err)
	}
	if err := a.ClearMarkers(ctx, "nomad", ""); err == nil {
		t.Error("clearing the markers of no job would clear every job's")
	}
	if err := a.kv().put(ctx, key, []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if m, err := a.ReadMarker(ctx, key); err == nil || m != nil {
		t.Errorf("a value that is no marker was accepted: %+v", m)
	}
}
