package pack

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// fakeNomad serves the three read endpoints WaitHealthy polls, so its
// verdicts are tested without a cluster.
func fakeNomad(t *testing.T, deployment any, allocs []map[string]any) *Nomad {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body any
		switch r.URL.Path {
		case "/v1/job/taewa-baseline":
			body = map[string]any{"ID": "taewa-baseline", "Version": 3,
				"TaskGroups": []map[string]any{{"Name": "taewa", "Count": 2}}}
		case "/v1/job/taewa-baseline/deployment":
			body = deployment
		case "/v1/job/taewa-baseline/allocations":
			body = allocs
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Nomad-Index", "1")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	c, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &Nomad{Client: c}
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
	cases := map[string]struct {
		deployment any
		allocs     []map[string]any
		wantErr    string // "" means healthy
	}{
		"all healthy": {running, []map[string]any{
			alloc("a1", 3, "running", &yes), alloc("a2", 3, "running", &yes),
			alloc("old", 2, "failed", nil), // an old version's failure does not count
		}, ""},
		"running but checks pending": {running, []map[string]any{
			alloc("a1", 3, "running", &yes), alloc("a2", 3, "running", nil),
		}, "1/2 healthy"},
		"one short": {running, []map[string]any{alloc("a1", 3, "running", &yes)}, "1/2 running"},
		"no deployment: running is enough": {nil, []map[string]any{
			alloc("a1", 3, "running", nil), alloc("a2", 3, "running", nil),
		}, ""},
		"allocation failed": {running, []map[string]any{
			alloc("a1", 3, "running", &yes),
			{"ID": "deadbeef-1", "JobVersion": 3, "DesiredStatus": "run", "ClientStatus": "failed",
				"TaskStates": map[string]any{"taewa": map[string]any{"Events": []map[string]any{{"Type": "Driver Failure", "DisplayMessage": "image not found"}}}}},
		}, "allocation deadbeef is failed: task taewa: image not found"},
		"unhealthy": {running, []map[string]any{alloc("a1abcdef99", 3, "running", &no)}, "allocation a1abcdef was marked unhealthy"},
		"deployment failed": {map[string]any{"ID": "dep1", "JobVersion": 3, "Status": "failed", "StatusDescription": "Failed due to progress deadline"},
			nil, "deployment dep1 failed: Failed due to progress deadline"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			n := fakeNomad(t, c.deployment, c.allocs)
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			var progress strings.Builder
			err := n.WaitHealthy(ctx, "taewa-baseline", 20*time.Millisecond, &progress)
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

func TestParseJobsSaysWhetherNomadRejectedOrWasUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "1 error occurred: job: missing datacenters", http.StatusBadRequest)
	}))
	defer srv.Close()
	r := mustRender(t, loadFixture(t, "features"), nil)
	for addr, want := range map[string]string{
		srv.URL:              "rejected the job rendered from testdata/features/templates/features.nomad.tpl",
		"http://127.0.0.1:1": "cannot reach Nomad at http://127.0.0.1:1 (set NOMAD_ADDR)",
	} {
		c, err := api.NewClient(&api.Config{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&Nomad{Client: c}).ParseJobs(r)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", addr, err, want)
		}
	}
}
