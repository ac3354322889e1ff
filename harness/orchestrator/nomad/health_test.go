package nomad

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

const allocA1 = "aaaaaaaa-0000-0000-0000-000000000001"
const allocA2 = "aaaaaaaa-0000-0000-0000-000000000002"

// fakeCluster serves the Nomad and Consul read endpoints WaitHealthy polls,
// so its verdicts are tested without a cluster.
func fakeCluster(t *testing.T, deployment any, allocs []map[string]any, passing []string) *Orchestrator {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body any
		switch r.URL.Path {
		case "/v1/job/taewa-baseline":
			body = map[string]any{"ID": "taewa-baseline", "Version": 3, "TaskGroups": []map[string]any{{
				"Name": "taewa", "Count": 2,
				"Services": []map[string]any{{"Name": "taewa", "Provider": "consul"}},
			}}}
		case "/v1/job/taewa-baseline/deployment":
			body = deployment
		case "/v1/job/taewa-baseline/allocations":
			body = allocs
		case "/v1/job/taewa-baseline/evaluations":
			body = []any{}
		case "/v1/health/service/taewa":
			var entries []map[string]any
			for _, id := range passing {
				entries = append(entries, map[string]any{
					"Service": map[string]any{"ID": "_nomad-task-" + id + "-group-taewa-taewa-http", "Address": "127.0.0.1", "Port": 1234},
					"Checks":  []map[string]any{{"Status": "passing"}},
				})
			}
			body = entries
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Nomad-Index", "1")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	a, err := New(srv.URL, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	a.PollInterval = 20 * time.Millisecond
	return a
}

func alloc(id string, version int, client string, healthy *bool) map[string]any {
	a := map[string]any{"ID": id, "JobVersion": version, "DesiredStatus": "run", "ClientStatus": client}
	if healthy != nil {
		a["DeploymentStatus"] = map[string]any{"Healthy": *healthy}
	}
	return a
}

func TestWaitHealthyVerdicts(t *testing.T) {
	yes, no := true, false
	running := map[string]any{"ID": "dep1", "JobVersion": 3, "Status": "running"}
	both := []string{allocA1, allocA2}
	cases := map[string]struct {
		deployment any
		allocs     []map[string]any
		passing    []string
		wantErr    string // "" means healthy
	}{
		"all healthy": {running, []map[string]any{
			alloc(allocA1, 3, "running", &yes), alloc(allocA2, 3, "running", &yes),
			alloc("old", 2, "failed", nil), // an old version's failure does not count
		}, both, ""},
		"running but checks pending": {running, []map[string]any{
			alloc(allocA1, 3, "running", &yes), alloc(allocA2, 3, "running", nil),
		}, both, "1/2 healthy"},
		"one short": {running, []map[string]any{alloc(allocA1, 3, "running", &yes)}, both, "1/2 running"},
		"no deployment: running and passing in Consul is enough": {nil, []map[string]any{
			alloc(allocA1, 3, "running", nil), alloc(allocA2, 3, "running", nil),
		}, both, ""},
		"Consul not yet passing": {nil, []map[string]any{
			alloc(allocA1, 3, "running", nil), alloc(allocA2, 3, "running", nil),
		}, []string{allocA1}, "service taewa: 1/2 passing in Consul"},
		"allocation failed": {running, []map[string]any{
			alloc(allocA1, 3, "running", &yes),
			{"ID": "deadbeef-1", "JobVersion": 3, "DesiredStatus": "run", "ClientStatus": "failed",
				"TaskStates": map[string]any{"taewa": map[string]any{"Events": []map[string]any{{"Type": "Driver Failure", "DisplayMessage": "image not found"}}}}},
		}, both, "allocation deadbeef is failed: task taewa: image not found"},
		"unhealthy": {running, []map[string]any{alloc("a1abcdef99", 3, "running", &no)}, both, "allocation a1abcdef was marked unhealthy"},
		"deployment failed": {map[string]any{"ID": "dep1", "JobVersion": 3, "Status": "failed", "StatusDescription": "Failed due to progress deadline"},
			nil, both, "deployment dep1 failed: Failed due to progress deadline"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a := fakeCluster(t, c.deployment, c.allocs, c.passing)
			var progress strings.Builder
			a.Progress = &progress
			d := &orchestrator.Deployment{Job: "taewa-baseline", Version: 3}
			err := a.WaitHealthy(context.Background(), d, time.Second)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("want healthy, got %v", err)
				}
				if !strings.Contains(progress.String(), "version 3: 2/2 running, 2/2 healthy") {
					t.Errorf("progress %q", progress.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, c.wantErr)
			}
		})
	}
}
