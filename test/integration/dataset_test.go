//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/sweep"
)

// A job of its own, so the test neither reuses nor stops anyone's
// social-network-baseline; the smallest dataset that keeps the probe's user
// (29 friends) above its minimum answer.
const (
	dsJob   = "sn-dataset"
	dsUsers = 60
	dsPosts = 2
)

// dataset_snapshot = false: this test is about loading through the API and
// its marker (snapshot_test.go covers deployments from a snapshot).
var dsVars = []string{"--var", "job_name=" + dsJob, "--var", "resource_scale=" + snResourceScale,
	"--var", "dataset_users=" + strconv.Itoa(dsUsers), "--var", "dataset_posts_per_user=" + strconv.Itoa(dsPosts), "--var", "dataset_snapshot=false"}

func dsSpec(name string, repetitions int) string {
	return fmt.Sprintf(`
sweep %q {
  seed          = 11
  repetitions   = %d
  warmup        = "1s"
  duration      = "4s"
  cooldown      = "0s"
  early_stop    = false
  orchestrators = ["nomad"]
  app "social-network" {
    variants    = ["baseline"]
    vars        = { job_name = %q, resource_scale = %s, dataset_users = %d, dataset_posts_per_user = %d, dataset_snapshot = false }
    rates       = [5]
    threads     = 1
    connections = 2
    # twenty sends cannot tell a saturated generator from one late wake-up;
    # the generator is not what this test is about
    max_generator_lag = "1s"
  }
}
`, name, repetitions, dsJob, snResourceScale, dsUsers, dsPosts)
}

// TestDatasetMarkerAndVerification runs sweeps on one social-network
// deployment through what used to go unnoticed: a Redis flushed under a
// reused deployment, and a sweep killed during its dataset load and resumed.
// Each time the dataset gate must refuse or the load must run again, and the
// Consul marker must say exactly when a load finished.
func TestDatasetMarkerAndVerification(t *testing.T) {
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	ad, err := nomad.New("", "")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	archive := results.Archive{Dir: filepath.Join(work, "results")}
	// --keep: the deployment outlives each sweep, as a crashed sweep's does
	common := []string{"--dir", archive.Dir, "--reports", filepath.Join(work, "reports"), "--vm", "", "--load-runner", "local", "--keep"}
	sweepFile := func(name string, reps int) string {
		file := filepath.Join(work, name+".hcl")
		if err := os.WriteFile(file, []byte(dsSpec(name, reps)), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	// an earlier run's job or marker would make the first sweep reuse them
	sh(root, orchbench, append([]string{"pack", "destroy", "social-network"}, dsVars...)...)
	deleteMarkers(t)
	defer deleteMarkers(t)
	defer sh(root, orchbench, append([]string{"pack", "destroy", "social-network"}, dsVars...)...)

	// 1. a fresh deployment: setup runs, is verified, and leaves its marker
	must(t, orchbench, append([]string{"sweep", "-f", sweepFile("dsa", 1)}, common...)...)
	first := steps(t, archive, "dsa")
	expectDataset(t, "fresh", first[0], results.OutcomeValid, sweep.SetupRan, sweep.VerifyPassed)
	if first[0].Metadata["deployment"] != "fresh" {
		t.Errorf("first deployment: %v, want fresh", first[0].Metadata["deployment"])
	}
	marker := onlyMarker(t)
	info, _, err := ad.Client.Jobs().Info(dsJob, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("orchbench/setup/nomad/%s/%d-", dsJob, *info.JobModifyIndex); !strings.HasPrefix(marker.key, want) || datasetMeta(first[0])["marker"] != marker.key {
		t.Fatalf("marker %q (step records %v), want it under %s", marker.key, datasetMeta(first[0])["marker"], want)
	}
	if marker.Revision != strconv.FormatUint(*info.JobModifyIndex, 10) || !strings.Contains(strings.Join(marker.Args, " "), "load --allow-remote --frontend http://{{endpoint}} --users 60") {
		t.Errorf("marker value %+v: want revision %d and the pack's load command", marker, *info.JobModifyIndex)
	}

	// 2. Redis flushed under the running deployment: the next sweep, a new
	// process, finds the marker, so it trusts the load but verifies: the
	// step is invalid, the marker goes, the load runs again before the next
	// step, which is valid
	flushRedis(t, ctx, ad)
	flushed := time.Now()
	must(t, orchbench, append([]string{"sweep", "-f", sweepFile("dsb", 2)}, common...)...)
	second := steps(t, archive, "dsb")
	if len(second) != 2 {
		t.Fatalf("%d steps archived, want 2", len(second))
	}
	expectDataset(t, "after FLUSHALL", second[0], results.OutcomeInvalid, sweep.SetupMarker, sweep.VerifyFailed)
	g := gate(second[0], gates.Dataset)
	for _, want := range []string{"problem lines", "home-timeline of user", "is empty, want at least", "the setup marker is deleted"} {
		if !strings.Contains(g.Detail, want) {
			t.Errorf("dataset gate detail lacks %q: %s", want, g.Detail)
		}
	}
	if second[0].Metadata["deployment"] != "reused running version" || len(second[0].Gates) != 2 {
		t.Errorf("the refused step should stop after its healthy and dataset gates on the reused deployment: %v, gates %+v", second[0].Metadata["deployment"], second[0].Gates)
	}
	expectDataset(t, "the step after the refusal", second[1], results.OutcomeValid, sweep.SetupRan, sweep.VerifyPassed)
	reloaded := onlyMarker(t)
	if !reloaded.Finished.After(flushed) || reloaded.key != marker.key {
		t.Errorf("marker after the reload: %s finished %s, want %s rewritten after the flush at %s", reloaded.key, reloaded.Finished, marker.key, flushed)
	}

	// 3. a sweep killed during its load: the load had deleted the marker
	// before it started, and the resumed sweep loads again. (The marker is
	// deleted by hand to start that load in a new process, as a refused
	// verification would; Redis is flushed so the load takes long enough to
	// be killed in.)
	flushRedis(t, ctx, ad)
	deleteMarkers(t)
	id := sweepID(t, archive, "dsb")
	cmd := exec.Command(orchbench, append([]string{"sweep", "--resume", id}, common...)...)
	cmd.Dir = root
	// its own process group, so the kill takes the loader with it, as a crash would
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the resumed sweep starts its load", func() error {
		if !strings.Contains(out.String(), "setup of "+dsJob) {
			return fmt.Errorf("no setup yet; output:\n%s", out.String())
		}
		return nil
	})
	if m := markers(t); len(m) != 0 {
		t.Errorf("a marker stands while the load runs: %v", m)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	t.Logf("killed the sweep during its load; its output:\n%s", out.String())
	if m := markers(t); len(m) != 0 {
		t.Fatalf("the killed load left a marker: %v", m)
	}
	resumed := must(t, orchbench, append([]string{"sweep", "--resume", id}, common...)...)
	if !strings.Contains(resumed, "setup of "+dsJob) {
		t.Error("the resumed sweep shows no setup output")
	}
	third := steps(t, archive, "dsb")
	expectDataset(t, "resumed after the killed load", third[0], results.OutcomeValid, sweep.SetupRan, sweep.VerifyPassed)
	if third[0].Metadata["deployment"] != "reused running version" {
		t.Errorf("the resumed sweep should reuse the running job, got %v", third[0].Metadata["deployment"])
	}
	if m := onlyMarker(t); !m.Finished.After(flushed) || m.key != marker.key {
		t.Errorf("no marker rewritten by the resumed load: %+v", m)
	}
	t.Logf("dataset marker and verification: %s in all", time.Since(started).Round(time.Second))
}

func steps(t *testing.T, archive results.Archive, name string) []results.StepResult {
	t.Helper()
	s, err := archive.LoadSteps(sweepID(t, archive, name))
	if err != nil {
		t.Fatal(err)
	}
	if len(s) == 0 {
		t.Fatalf("sweep %s archived no step", name)
	}
	return s
}

func sweepID(t *testing.T, archive results.Archive, name string) string {
	t.Helper()
	id, err := archive.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func datasetMeta(s results.StepResult) map[string]any {
	m, _ := s.Metadata["dataset"].(map[string]any)
	return m
}

func gate(s results.StepResult, name string) results.Gate {
	for _, g := range s.Gates {
		if g.Name == name {
			return g
		}
	}
	return results.Gate{Name: name, Detail: "(no such gate)"}
}

func expectDataset(t *testing.T, what string, s results.StepResult, outcome results.Outcome, setup, verification string) {
	t.Helper()
	ds := datasetMeta(s)
	g := gate(s, gates.Dataset)
	t.Logf("%s: %s; dataset gate passed=%v: %s; metadata %v", what, s.OutcomeText(), g.Passed, g.Detail, ds)
	if s.Outcome != outcome || ds["setup"] != setup || ds["verification"] != verification || g.Passed != (verification != sweep.VerifyFailed) {
		t.Fatalf("%s: outcome %s, setup %v, verification %v, dataset gate passed=%v; want %s, %q, %q", what, s.Outcome, ds["setup"], ds["verification"], g.Passed, outcome, setup, verification)
	}
}

// flushRedis empties the deployment's Redis, as a restart would.
func flushRedis(t *testing.T, ctx context.Context, ad *nomad.Orchestrator) {
	t.Helper()
	eps, err := ad.Endpoints(ctx, deploymentOf(t, ad, dsJob), dsJob+"-redis")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: eps[0].HostPort()})
	defer rdb.Close()
	before, _ := rdb.DBSize(ctx).Result()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("Redis holds %d keys after FLUSHALL: %v", n, err)
	}
	t.Logf("flushed Redis at %s (%d keys before)", eps[0].HostPort(), before)
	if before == 0 {
		t.Fatal("Redis was empty before the flush: the dataset was never loaded")
	}
}

type markerValue struct {
	key      string
	Revision string    `json:"revision"`
	Args     []string  `json:"args"`
	Finished time.Time `json:"finished"`
}

const consulKV = "http://127.0.0.1:8500/v1/kv/orchbench/setup/nomad/" + dsJob + "/"

// markers lists the job's setup markers in Consul.
func markers(t *testing.T) []markerValue {
	t.Helper()
	resp, err := http.Get(consulKV + "?recurse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var entries []struct {
		Key   string
		Value []byte // base64 in the JSON
	}
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		t.Fatal(err)
	}
	var out []markerValue
	for _, e := range entries {
		m := markerValue{key: e.Key}
		if err := json.Unmarshal(e.Value, &m); err != nil {
			t.Fatalf("marker %s: %v in %q", e.Key, err, e.Value)
		}
		out = append(out, m)
	}
	return out
}

func onlyMarker(t *testing.T) markerValue {
	t.Helper()
	m := markers(t)
	if len(m) != 1 {
		t.Fatalf("%d setup markers for %s, want one: %+v", len(m), dsJob, m)
	}
	return m[0]
}

func deleteMarkers(t *testing.T) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, consulKV+"?recurse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
