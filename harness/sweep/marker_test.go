package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/testutil"
)

func TestMarkerKeyNamesDefinitionAndArgs(t *testing.T) {
	app := jobDefinition{Orchestrator: "nomad", ID: "social-network-baseline", Version: 2, Revision: "4711"}
	args := []string{"dsb", "social-network", "load", "--frontend", "http://{{endpoint}}", "--users", "60"}
	key := markerKey(app, nil, args)
	if !strings.HasPrefix(key, "orchbench/setup/nomad/social-network-baseline/4711-") || len(key) != len("orchbench/setup/nomad/social-network-baseline/4711-")+12 {
		t.Fatalf("key %q is not orchbench/setup/<orchestrator>/<job>/<revision>-<12 hex>", key)
	}
	if !strings.HasPrefix(key, orchestrator.MarkerPrefix(app.Orchestrator, app.ID)) {
		t.Fatalf("key %q is outside the job's prefix %q, so clearing the job's markers would miss it", key, orchestrator.MarkerPrefix(app.Orchestrator, app.ID))
	}
	same := func(what string, k string) {
		t.Helper()
		if k != key {
			t.Errorf("%s changed the key: %q, was %q", what, k, key)
		}
	}
	differs := func(what string, k string) {
		t.Helper()
		if k == key {
			t.Errorf("%s kept the key %q: a marker would vouch for a dataset it does not describe", what, k)
		}
	}
	// An identical re-registration keeps the index; the version is not part
	// of the key (a purged job starts again at version 0).
	same("the same definition and arguments", markerKey(app, nil, append([]string(nil), args...)))
	same("another version at the same index", markerKey(jobDefinition{Orchestrator: "nomad", ID: app.ID, Version: 0, Revision: "4711"}, nil, args))
	differs("a new definition (JobModifyIndex)", markerKey(jobDefinition{Orchestrator: "nomad", ID: app.ID, Version: 2, Revision: "4712"}, nil, args))
	differs("other setup arguments", markerKey(app, nil, append(append([]string(nil), args[:6]...), "962")))
	differs("arguments split differently", markerKey(app, nil, []string{"dsb social-network", "load", "--frontend", "http://{{endpoint}}", "--users", "60"}))
	differs("another job", markerKey(jobDefinition{Orchestrator: "nomad", ID: "social-network-vertical", Revision: "4711"}, nil, args))
	differs("the same job on another orchestrator", markerKey(jobDefinition{Orchestrator: "swarm", ID: app.ID, Version: 2, Revision: "4711"}, nil, args))
	withDB := markerKey(app, []jobDefinition{{ID: "db", Revision: "10"}, {ID: "cache", Revision: "11"}}, args)
	differs("a second job of the deployment", withDB)
	if markerKey(app, []jobDefinition{{ID: "cache", Revision: "11"}, {ID: "db", Revision: "10"}}, args) != withDB {
		t.Error("the order of the other jobs changed the key")
	}
	if withDB == markerKey(app, []jobDefinition{{ID: "db", Revision: "12"}, {ID: "cache", Revision: "11"}}, args) {
		t.Error("a new definition of another job kept the key")
	}
	if k := markerKey(jobDefinition{Orchestrator: "nomad", ID: "a/b", Revision: "1"}, nil, args); !strings.HasPrefix(k, "orchbench/setup/nomad/a%2Fb/1-") {
		t.Errorf("a job ID with a slash must stay one key segment, got %q", k)
	}
}

// TestSocialNetworkPackHooks renders the pack and checks that its setup and
// verification describe the same dataset and substitute the front end.
func TestSocialNetworkPackHooks(t *testing.T) {
	p, err := pack.Load(filepath.Join("..", "..", "packs", "social-network"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(map[string]string{"dataset_users": "60", "dataset_posts_per_user": "3", "dataset_snapshot": "false"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta := renderedJobMeta(t, r.Files["social-network.nomad"])
	app, err := contract.ParseApp(&api.Job{Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	setup, verify := app.Setup.Args, app.Verify.Args
	if setup == nil || verify == nil {
		t.Fatalf("setup args %q, verify args %q", setup, verify)
	}
	got := strings.Join(app.Verify.Fill("127.0.0.1:31000"), " ")
	if got != "dsb social-network verify --allow-remote --frontend http://127.0.0.1:31000 --users 60 --dataset-seed 1" {
		t.Errorf("verify args %q", got)
	}
	if flag(setup, "--users") != flag(verify, "--users") || flag(setup, "--seed") != flag(verify, "--dataset-seed") {
		t.Errorf("setup %q and verification %q describe different datasets", setup, verify)
	}
	if app.Verify.Timeout != 5*time.Minute {
		t.Errorf("verify timeout %s", app.Verify.Timeout)
	}
}

func flag(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// renderedJobMeta reads the job's literal meta strings without Nomad.
func renderedJobMeta(t *testing.T, text string) map[string]string {
	t.Helper()
	file, diags := hclparse.NewParser().ParseHCL([]byte(text), "job.nomad")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	meta := map[string]string{}
	for _, job := range file.Body.(*hclsyntax.Body).Blocks {
		for _, b := range job.Body.Blocks {
			if b.Type != "meta" {
				continue
			}
			for name, attr := range b.Body.Attributes {
				v, diags := attr.Expr.Value(nil)
				if diags.HasErrors() {
					t.Fatalf("meta %s: %s", name, diags)
				}
				meta[name] = v.AsString()
			}
		}
	}
	return meta
}

// fakeCluster stands in for the Nomad and Consul HTTP APIs prepare uses: one
// job with one allocation whose front end is registered in Consul, and KV.
type fakeCluster struct {
	mu sync.Mutex
	// version is the job's; allocVersion its allocations' (they differ
	// while a newly registered version rolls out)
	version, allocVersion uint64
	modifyIndex           uint64
	restarts              uint64
	kv                    *testutil.ConsulKV
}

const (
	fakeJob   = "sn"
	fakeAlloc = "0b5d8a4e-6c1f-4a59-9d3e-2f7a1c9e8b01"
)

func newFakeCluster() *fakeCluster {
	return &fakeCluster{version: 3, allocVersion: 3, modifyIndex: 40, kv: testutil.NewConsulKV()}
}

func (f *fakeCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("X-Nomad-Index", "1")
	w.Header().Set("X-Nomad-LastContact", "0")
	path := r.URL.Path
	switch {
	case path == "/v1/job/"+fakeJob:
		json.NewEncoder(w).Encode(api.Job{ID: ptr(fakeJob), Version: ptr(f.version), JobModifyIndex: ptr(f.modifyIndex), Status: ptr("running"),
			TaskGroups: []*api.TaskGroup{{Name: ptr("sn"), Count: ptr(1), Tasks: []*api.Task{{Name: "redis", Driver: "docker"}, {Name: "frontend", Driver: "docker"}}}}})
	case path == "/v1/nodes":
		io.WriteString(w, `[{"ID":"n1","Name":"n1","Status":"ready"}]`)
	case path == "/v1/node/n1":
		io.WriteString(w, `{"ID":"n1","Name":"n1","Status":"ready","Attributes":{"cpu.totalcompute":"4200","cpu.numcores":"2"}}`)
	case path == "/v1/job/"+fakeJob+"/allocations":
		json.NewEncoder(w).Encode([]api.AllocationListStub{{
			ID: fakeAlloc, JobID: fakeJob, TaskGroup: "sn", JobVersion: f.allocVersion, DesiredStatus: "run", ClientStatus: "running",
			TaskStates: map[string]*api.TaskState{"redis": {State: "running", Restarts: f.restarts}, "frontend": {State: "running"}},
		}})
	case path == "/v1/health/service/sn-frontend":
		fmt.Fprintf(w, `[{"Node":{"Node":"n1"},"Service":{"ID":"_nomad-task-%s-frontend-sn-frontend-http","Service":"sn-frontend","Address":"127.0.0.1","Port":31000},"Checks":[{"Status":"passing"}]}]`, fakeAlloc)
	case strings.HasPrefix(path, "/v1/kv/"):
		f.kv.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

func ptr[T any](v T) *T { return &v }

func (f *fakeCluster) markers() []string { return f.kv.Keys(orchestrator.MarkerRoot) }

// fakeHook is the orchbench binary the hooks run: it logs each call, and
// fails when a file named after its first argument + "-fails" exists.
const fakeHook = `#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/calls"
if [ -f "$dir/$1-blocks" ]; then exec sleep 30; fi
if [ -f "$dir/$1-fails" ]; then
  echo "read 4 timelines"
  echo "problem: home-timeline of user 3 is empty, want at least 2 (one per friend, 2 friends)"
  echo "problem: user-timeline of user 3 is empty, want at least 1 (every user composes one or more)"
  echo "2 problems" >&2
  exit 1
fi
echo "$1 done"
`

type hookHarness struct {
	dir  string
	fake *fakeCluster
	ad   *nomad.Orchestrator
	out  *strings.Builder
}

func newHookHarness(t *testing.T) *hookHarness {
	t.Helper()
	h := &hookHarness{dir: t.TempDir(), fake: newFakeCluster(), out: &strings.Builder{}}
	if err := os.WriteFile(filepath.Join(h.dir, "orchbench"), []byte(fakeHook), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.fake)
	t.Cleanup(srv.Close)
	client, err := api.NewClient(&api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	h.ad = &nomad.Orchestrator{Client: client, ConsulAddr: srv.URL, HTTP: srv.Client()}
	return h
}

// runner is a new harness process: it knows nothing of earlier ones.
func (h *hookHarness) runner() *Runner {
	return &Runner{Orchestrators: map[string]orchestrator.Orchestrator{"nomad": h.ad}, Out: h.out, Orchbench: filepath.Join(h.dir, "orchbench")}
}

func (h *hookHarness) deployment(fresh bool) *deployment {
	app, err := contract.ParseApp(&api.Job{ID: ptr(fakeJob), Meta: map[string]string{
		"orchbench_service":     "sn-frontend",
		"orchbench_setup_args":  `["setup","--frontend","http://{{endpoint}}"]`,
		"orchbench_verify_args": `["verify","--frontend","http://{{endpoint}}"]`,
	}})
	if err != nil {
		panic(err)
	}
	d := &orchestrator.Deployment{Orchestrator: "nomad", Job: fakeJob, Version: h.fake.version, App: app}
	return &deployment{orch: h.ad, jobs: []*orchestrator.Deployment{d}, app: d, dataset: datasetState{fresh: fresh}}
}

// calls returns the hook calls since the last look.
func (h *hookHarness) calls(t *testing.T) []string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(h.dir, "calls"))
	os.Remove(filepath.Join(h.dir, "calls"))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, strings.Fields(l)[0])
		}
	}
	return out
}

func (h *hookHarness) set(t *testing.T, name string, on bool) {
	t.Helper()
	p := filepath.Join(h.dir, name)
	if on {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		os.Remove(p)
	}
}

type prepared struct {
	gate results.Gate
	rec  *datasetRecord
}

func (h *hookHarness) prepare(t *testing.T, ctx context.Context, r *Runner, dep *deployment) prepared {
	t.Helper()
	sr := results.StepResult{Metadata: map[string]any{}}
	g := r.prepare(ctx, dep, &sr)
	if g.Name != gates.Dataset {
		t.Fatalf("gate %q, want %q", g.Name, gates.Dataset)
	}
	rec, _ := sr.Metadata["dataset"].(*datasetRecord)
	if rec == nil {
		t.Fatalf("no dataset record in the step's metadata: %v", sr.Metadata)
	}
	return prepared{g, rec}
}

func expectPrepared(t *testing.T, step string, got prepared, calls []string, passed bool, setup, verification string, wantCalls ...string) {
	t.Helper()
	if got.gate.Passed != passed || got.rec.Setup != setup || got.rec.Verification != verification || strings.Join(calls, ",") != strings.Join(wantCalls, ",") {
		t.Fatalf("%s: gate passed=%v (%s), setup %q, verification %q, hooks run %q; want passed=%v, setup %q, verification %q, hooks %q",
			step, got.gate.Passed, got.gate.Detail, got.rec.Setup, got.rec.Verification, calls, passed, setup, verification, wantCalls)
	}
}

// TestPrepareRunsSetupUnlessMarkedAndVerifiesReuse walks one deployment
// through the lives it can have: loaded fresh, reused by the same process and
// by a new one, a Redis restart that emptied it, a crash during a load.
func TestPrepareRunsSetupUnlessMarkedAndVerifiesReuse(t *testing.T) {
	h := newHookHarness(t)
	ctx := context.Background()
	r := h.runner()
	dep := h.deployment(true)

	// 1. fresh: setup, marker, verification
	got := h.prepare(t, ctx, r, dep)
	expectPrepared(t, "fresh", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")
	key := markerKey(jobDefinition{Orchestrator: "nomad", ID: fakeJob, Revision: "40"}, nil, []string{"setup", "--frontend", "http://{{endpoint}}"})
	if got.rec.Marker != key || !reflect.DeepEqual(h.fake.markers(), []string{key}) {
		t.Fatalf("marker %q recorded, %q in Consul; want %q", got.rec.Marker, h.fake.markers(), key)
	}
	if !strings.Contains(h.out.String(), "setup of sn: orchbench setup --frontend http://127.0.0.1:31000") {
		t.Errorf("the hook did not get the front end's address:\n%s", h.out)
	}

	// 2. the next step in the same process trusts both
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "same process", got, h.calls(t), true, SetupEarlier, VerifyEarlier)

	// 3. a new process finds the job running and the marker: verification only
	r, dep = h.runner(), h.deployment(false)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "new process, marker present", got, h.calls(t), true, SetupMarker, VerifyPassed, "verify")
	if got.rec.MarkerFinished.IsZero() {
		t.Error("the marker's finishing time is not recorded")
	}

	// 4. Redis restarted (and came back empty): verified again, refused,
	// marker deleted
	h.fake.restarts++
	h.set(t, "verify-fails", true)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "Redis restarted", got, h.calls(t), false, SetupEarlier, VerifyFailed, "verify")
	for _, want := range []string{"2 problem lines", `"home-timeline of user 3 is empty, want at least 2 (one per friend, 2 friends)"`, `"user-timeline of user 3 is empty`, "setup runs again"} {
		if !strings.Contains(got.gate.Detail, want) {
			t.Errorf("dataset gate detail lacks %q: %s", want, got.gate.Detail)
		}
	}
	if len(got.rec.Problems) != 2 {
		t.Errorf("problems recorded: %q", got.rec.Problems)
	}
	if m := h.fake.markers(); len(m) != 0 {
		t.Fatalf("a refuted dataset kept its marker: %q", m)
	}

	// 5. the next step loads again and verifies
	h.set(t, "verify-fails", false)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "after refutation", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")
	if len(h.fake.markers()) != 1 {
		t.Fatal("the repeated setup wrote no marker")
	}

	// 5b. refuted while Consul cannot delete the marker: the process still
	// knows to load again, whatever the stale marker says
	h.fake.restarts++
	h.fake.kv.FailNextDeletes(1)
	h.set(t, "verify-fails", true)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "refuted, marker not deleted", got, h.calls(t), false, SetupEarlier, VerifyFailed, "verify")
	if len(got.rec.Notes) != 1 || !strings.Contains(got.rec.Notes[0], "marker not deleted") || len(h.fake.markers()) != 1 {
		t.Fatalf("the undeleted marker: notes %q, markers %q", got.rec.Notes, h.fake.markers())
	}
	h.set(t, "verify-fails", false)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "after refutation with a stale marker", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")

	// 6. a load interrupted (the process killed) leaves no marker: the
	// next process loads again even though the job is unchanged
	h.set(t, "setup-blocks", true)
	r, dep = h.runner(), h.deployment(true)
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	got = h.prepare(t, cctx, r, dep)
	cancel()
	h.set(t, "setup-blocks", false)
	expectPrepared(t, "interrupted load", got, h.calls(t), false, SetupFailed, VerifyNone, "setup")
	if m := h.fake.markers(); len(m) != 0 {
		t.Fatalf("an interrupted load left a marker: %q", m)
	}
	r, dep = h.runner(), h.deployment(false)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "resumed after the interruption", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")

	// 7. a failing load fails the gate, and runs again at the next step
	h.set(t, "setup-fails", true)
	dep = h.deployment(true)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "failed load", got, h.calls(t), false, SetupFailed, VerifyNone, "setup")
	if !strings.Contains(got.gate.Detail, "setup (orchbench setup --frontend http://127.0.0.1:31000) failed") || len(h.fake.markers()) != 0 {
		t.Fatalf("failed load: %s; markers %q", got.gate.Detail, h.fake.markers())
	}
	h.set(t, "setup-fails", false)
	got = h.prepare(t, ctx, r, dep)
	expectPrepared(t, "after a failed load", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")

	// 8. a job someone else re-registered (its new version still rolling
	// out) is not the deployment: no marker vouches for it
	dep = h.deployment(false)
	h.fake.version++
	got = h.prepare(t, ctx, h.runner(), dep)
	h.fake.version--
	if got.gate.Passed || !strings.Contains(got.gate.Detail, "something else registered it") || len(h.calls(t)) != 0 {
		t.Errorf("a changed job passed or ran hooks: %+v", got.gate)
	}
}

func TestPrepareWithoutOrWithBrokenHooks(t *testing.T) {
	h := newHookHarness(t)
	ctx := context.Background()
	dep := h.deployment(true)
	dep.app.App = contract.App{Service: "sn-frontend"}
	got := h.prepare(t, ctx, h.runner(), dep)
	if got.gate.Passed || !got.gate.NotChecked || len(h.calls(t)) != 0 {
		t.Errorf("a pack without hooks: %+v", got.gate)
	}
	// unreadable hook arguments never get this far: the contract refuses
	// them when the job is read (contract.TestParseAppRefusesMalformedValues)

	// verification alone: a failure refuses the step, and with no setup to
	// re-run there is no marker to delete
	dep = h.deployment(false)
	dep.app.App.Setup.Args = nil
	h.set(t, "verify-fails", true)
	got = h.prepare(t, ctx, h.runner(), dep)
	expectPrepared(t, "verification only", got, h.calls(t), false, SetupNone, VerifyFailed, "verify")
	if strings.Contains(got.gate.Detail, "setup runs again") {
		t.Errorf("promised a setup the pack does not have: %s", got.gate.Detail)
	}
}

// keepsNoMarkers is an adapter without a marker store of its own, as Swarm
// and Kubernetes are: only the orchestrator contract shows through.
type keepsNoMarkers struct{ orchestrator.Orchestrator }

// An orchestrator that keeps no markers has its markers kept in the
// runner's store; with none, nothing outlives the process, and a new
// process loads the running job again rather than trusting it.
func TestMarkersOfAnOrchestratorWithoutAStore(t *testing.T) {
	h := newHookHarness(t)
	ctx := context.Background()
	plain := func(fresh bool) *deployment {
		dep := h.deployment(fresh)
		dep.orch = keepsNoMarkers{h.ad}
		return dep
	}
	if _, ok := plain(true).orch.(orchestrator.SetupMarkers); ok {
		t.Fatal("the wrapped adapter still shows its marker store, so this test shows nothing")
	}

	withStore := func() *Runner { r := h.runner(); r.Markers = h.ad; return r }
	got := h.prepare(t, ctx, withStore(), plain(true))
	expectPrepared(t, "fresh, the runner's store", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")
	if m := h.fake.markers(); len(m) != 1 || m[0] != got.rec.Marker {
		t.Fatalf("markers %q, want the step's %q in the runner's store", m, got.rec.Marker)
	}
	got = h.prepare(t, ctx, withStore(), plain(false))
	expectPrepared(t, "new process, the runner's store", got, h.calls(t), true, SetupMarker, VerifyPassed, "verify")

	// no store at all: setup still runs, and says why it cannot be trusted later
	got = h.prepare(t, ctx, h.runner(), plain(true))
	expectPrepared(t, "fresh, no store", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")
	if len(got.rec.Notes) != 1 || !strings.Contains(got.rec.Notes[0], "marker not written: no store keeps setup markers for nomad") {
		t.Fatalf("notes %q", got.rec.Notes)
	}
	got = h.prepare(t, ctx, h.runner(), plain(false))
	expectPrepared(t, "new process, no store", got, h.calls(t), true, SetupRan, VerifyPassed, "setup", "verify")
	if len(got.rec.Notes) == 0 || !strings.Contains(got.rec.Notes[0], "marker unreadable, so setup runs: no store keeps setup markers") {
		t.Fatalf("notes %q", got.rec.Notes)
	}
}

// Data that comes with the deployment (a verification, no setup hook: the
// social network's snapshot images) has nothing to load again when its
// verification fails: the deployment is asked to be made again (the step
// does so, then verifies once more). With a setup hook, setup runs again
// instead, and the deployment stays.
func TestRefutedDataWithoutSetupRemakesTheDeployment(t *testing.T) {
	h := newHookHarness(t)
	ctx := context.Background()
	h.set(t, "verify-fails", true)

	dep := h.deployment(false)
	dep.app.App.Setup.Args = nil
	got := h.prepare(t, ctx, h.runner(), dep)
	if got.gate.Passed || !dep.dataset.remake || dep.dataset.reload {
		t.Errorf("verification only, refuted: passed %v, remake %v, reload %v (%s)", got.gate.Passed, dep.dataset.remake, dep.dataset.reload, got.gate.Detail)
	}

	dep = h.deployment(false)
	got = h.prepare(t, ctx, h.runner(), dep)
	if got.gate.Passed || dep.dataset.remake || !dep.dataset.reload {
		t.Errorf("with setup, refuted: passed %v, remake %v, reload %v (%s)", got.gate.Passed, dep.dataset.remake, dep.dataset.reload, got.gate.Detail)
	}
}
