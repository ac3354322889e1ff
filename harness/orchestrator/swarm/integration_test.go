//go:build integration

package swarm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/limits"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
)

// TestSwarmTaewa deploys a taewa-like job (2 replicas, 0.5 cores and
// 256 MiB each) on the local swarm, checks it answers on its published
// host ports, reads the limits back from the kernel, kills and replaces
// tasks, and stops leaving nothing behind. It needs a Docker daemon that is
// a swarm manager (docker swarm init --advertise-addr 127.0.0.1) and builds
// orchbench/taewa:local with cluster/images.sh when that is not up to date.
//
//	go test -tags integration -run TestSwarmTaewa -v ./harness/orchestrator/swarm/
func TestSwarmTaewa(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a, err := NewEngine("")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.manager(ctx); err != nil {
		t.Skip(err)
	}
	a.Progress = testWriter{t}
	buildImage(t)

	job := tt.Taewa()
	job.ID, job.Name = tt.Ptr("orchbench-swarm-it"), tt.Ptr("orchbench-swarm-it")
	// naming the alloc data dir gives each slot a volume, which Stop must remove
	job.TaskGroups[0].Tasks[0].Env["ORCHBENCH_DATA"] = "${NOMAD_ALLOC_DIR}/data/taewa"
	d, err := a.Deploy(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(context.Background(), d); err != nil {
			t.Errorf("stop: %v", err)
		}
		assertGone(t, a, d.Job)
	})
	if !d.Fresh {
		t.Log("the job was already running at this version: reused")
	}
	if err := a.WaitHealthy(ctx, d, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("healthy after %s", d.DeployDuration)
	// each slot has its data volume, labelled so Stop finds it
	vols, err := a.Client.VolumeList(ctx, client.VolumeListOptions{Filters: jobFilter(d.Job)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range vols.Items {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	version := d.Plan.Service(d.Job + "-taewa").Version()
	if want := []string{d.Job + "-taewa-data-" + version + "-1", d.Job + "-taewa-data-" + version + "-2"}; !reflect.DeepEqual(names, want) {
		t.Errorf("volumes %q, want %q", names, want)
	}
	rev, err := a.Revision(ctx, d)
	if err != nil {
		t.Fatal(err)
	}

	// the entry answers on each task's host port, on 127.0.0.1
	eps, err := a.Endpoints(ctx, d, "taewa")
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 2 {
		t.Fatalf("%d endpoints, want 2: %+v", len(eps), eps)
	}
	for _, ep := range eps {
		body := get(t, fmt.Sprintf("http://%s:%d/?n=1", ep.Address, ep.Port))
		t.Logf("endpoint %s:%d (task %s, node %s): %.60q", ep.Address, ep.Port, shortID(ep.Instance), ep.Node, body)
	}

	// the kernel enforces what the pack declared
	lims, err := a.Limits(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lims {
		t.Logf("task %s: cgroup v%d %s: quota %d/%d = %.3f cores, memory %d MiB", shortID(l.ID), l.CgroupVersion, l.CgroupPath, l.CFSQuotaUS, l.CFSPeriodUS, l.QuotaCores, l.MemoryLimitMiB)
		if !limits.Equal(l.EffectiveCores, 0.5) || l.MemoryLimitMiB != 256 {
			t.Errorf("task %s: enforced %.3f cores / %d MiB, declared %s", shortID(l.ID), l.EffectiveCores, l.MemoryLimitMiB, describe(l.Declared))
		}
	}
	alignedPolicy(t, a, d, "after the deploy")

	// a second deploy of the same job reuses it
	again, err := a.Deploy(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if again.Fresh {
		t.Error("an unchanged, healthy job was deployed again")
	}
	if r, _ := a.Revision(ctx, again); r != rev {
		t.Errorf("revision changed on reuse: %s -> %s", rev, r)
	}

	// a changed job updates the services in place: a new version and revision
	job.TaskGroups[0].Tasks[0].Env["ORCHBENCH_UPDATED"] = "1"
	upd, err := a.Deploy(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if !upd.Fresh || upd.Version == d.Version {
		t.Errorf("a changed job: fresh %v, version %s (was %s)", upd.Fresh, upd.Version, d.Version)
	}
	if err := a.WaitHealthy(ctx, upd, 2*time.Minute); err != nil {
		t.Fatalf("after the update: %v", err)
	}
	if r, _ := a.Revision(ctx, upd); r == rev {
		t.Error("the revision did not change with the update")
	}
	d = upd

	// faults: the task is replaced by a new one in its slot
	for _, f := range []struct {
		name   string
		inject func(context.Context, *deployment, string) (string, error)
	}{{"kill-task", a.KillTask}, {"replace", a.ReplaceTask}} {
		fault := f.name
		before, err := a.Instances(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		victim, err := f.inject(ctx, d, "taewa")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WaitHealthy(ctx, d, 2*time.Minute); err != nil {
			t.Fatalf("after %s: %v", fault, err)
		}
		after, err := a.Instances(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Fatalf("after %s: %d instances, before %d", fault, len(after), len(before))
		}
		for _, in := range after {
			if in.ID == victim {
				t.Errorf("after %s: task %s still listed as running", fault, shortID(victim))
			}
		}
		t.Logf("%s of task %s: replaced and healthy in %s; instances %v", fault, shortID(victim), time.Since(start).Round(time.Millisecond), summary(after))
		alignedPolicy(t, a, d, "after "+fault)
	}
}

// alignedPolicy: every task of the 0.5-core Taewa weighs what the kubelet
// gives 500 millicores and may not swap, as on Kubernetes (policy.go),
// read back from the kernel: Swarm itself would leave 1024 and 256 MiB of
// swap, so a task Swarm replaced after a fault shows whether
// WaitHealthy aligned it too.
func alignedPolicy(t *testing.T, a *Engine, d *deployment, when string) {
	t.Helper()
	lims, err := a.Limits(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lims {
		want := int64(512)
		if l.CgroupVersion == 2 {
			want = 1 + (512-2)*9999/262142 // the runtime's conversion of shares
		}
		if l.CPUWeight != want || (l.SwapAccounted && l.SwapLimitBytes != 0) {
			t.Errorf("%s: task %s weighs %d (want %d), swap %d bytes (accounted %v, want none)", when, shortID(l.ID), l.CPUWeight, want, l.SwapLimitBytes, l.SwapAccounted)
		}
	}
}

func summary(ins []runningTask) []string {
	var out []string
	for _, in := range ins {
		out = append(out, fmt.Sprintf("%s slot %d restarts %d image %s", shortID(in.ID), in.Slot, in.Restarts, shortID(in.ImageID)))
	}
	return out
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %q", url, resp.Status, b)
	}
	return string(b)
}

// buildImage runs cluster/images.sh taewa, which is quick when the image
// for the current sources (and health checker) exists.
func buildImage(t *testing.T) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	cmd := exec.Command(filepath.Join(root, "cluster", "images.sh"), "taewa")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cluster/images.sh taewa: %v", err)
	}
}

// assertGone checks that no service, container, network or volume of the job is left.
func assertGone(t *testing.T, a *Engine, job string) {
	ctx := context.Background()
	f := jobFilter(job)
	if s, err := a.Client.ServiceList(ctx, client.ServiceListOptions{Filters: f}); err != nil || len(s.Items) > 0 {
		t.Errorf("services left: %d (%v)", len(s.Items), err)
	}
	if c, err := a.Client.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err != nil || len(c.Items) > 0 {
		t.Errorf("containers left: %d (%v)", len(c.Items), err)
	}
	if n, err := a.Client.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err != nil || len(n.Items) > 0 {
		t.Errorf("networks left: %d (%v)", len(n.Items), err)
	}
	if v, err := a.Client.VolumeList(ctx, client.VolumeListOptions{Filters: f}); err != nil || len(v.Items) > 0 {
		t.Errorf("volumes left: %d (%v)", len(v.Items), err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestSwarmRejected: a task Swarm cannot start (its image is missing) fails
// WaitHealthy at once, naming the service, the task and Swarm's error.
func TestSwarmRejected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, err := NewEngine("")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.manager(ctx); err != nil {
		t.Skip(err)
	}
	job := tt.Taewa()
	job.ID = tt.Ptr("orchbench-swarm-it-rejected")
	job.TaskGroups[0].Tasks[0].Config["image"] = "orchbench/no-such-image:local"
	d, err := a.Deploy(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(context.Background(), d); err != nil {
			t.Errorf("stop: %v", err)
		}
		assertGone(t, a, d.Job)
	})
	start := time.Now()
	err = a.WaitHealthy(ctx, d, 2*time.Minute)
	if err == nil || !strings.Contains(err.Error(), "service "+d.Job+"-taewa: task ") || !strings.Contains(err.Error(), "No such image: orchbench/no-such-image:local") {
		t.Fatalf("WaitHealthy: %v", err)
	}
	t.Logf("failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
}

// TestSwarmJobFile deploys any job given as Nomad's JSON (ORCHBENCH_SWARM_JOB,
// e.g. `nomad job run -output` of a rendered pack), waits for it, GETs the
// entry's ORCHBENCH_SWARM_PATH (default: the job's orchbench_probe_path
// meta, else /) on every published host port, and stops it unless
// ORCHBENCH_SWARM_KEEP is set. MHz per core comes from ORCHBENCH_SWARM_MHZ.
func TestSwarmJobFile(t *testing.T) {
	file := os.Getenv("ORCHBENCH_SWARM_JOB")
	if file == "" {
		t.Skip("ORCHBENCH_SWARM_JOB names no job file")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a, err := NewEngine("")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.manager(ctx); err != nil {
		t.Skip(err)
	}
	a.Progress = testWriter{t}
	if mhz := os.Getenv("ORCHBENCH_SWARM_MHZ"); mhz != "" {
		if _, err := fmt.Sscan(mhz, &a.Options.MHzPerCore); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var wrapped struct{ Job *api.Job }
	job := &api.Job{}
	if err := json.Unmarshal(b, &wrapped); err == nil && wrapped.Job != nil {
		job = wrapped.Job
	} else if err := json.Unmarshal(b, job); err != nil {
		t.Fatal(err)
	}
	d, err := a.Deploy(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Plan.RemarkSummary() {
		t.Log("remark: " + r)
	}
	if os.Getenv("ORCHBENCH_SWARM_KEEP") == "" {
		t.Cleanup(func() {
			if err := a.Stop(context.Background(), d); err != nil {
				t.Errorf("stop: %v", err)
			}
			assertGone(t, a, d.Job)
		})
	}
	if err := a.WaitHealthy(ctx, d, 6*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("healthy after %s", d.DeployDuration)
	if d.Plan.Entry == nil {
		return
	}
	path := os.Getenv("ORCHBENCH_SWARM_PATH")
	if path == "" {
		path = job.Meta["orchbench_probe_path"]
	}
	if path == "" {
		path = "/"
	}
	eps, err := a.Endpoints(ctx, d, d.Plan.Entry.Service)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		body := get(t, fmt.Sprintf("http://%s:%d%s", ep.Address, ep.Port, path))
		t.Logf("GET %s:%d%s (task %s): %.120q", ep.Address, ep.Port, path, shortID(ep.Instance), body)
	}
	lims, err := a.Limits(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lims {
		t.Logf("%s/%s: declared %s; enforced quota %.3f cores (cpuset %s), %d MiB", l.Group, l.Task, describe(l.Declared), l.QuotaCores, l.CPUSet, l.MemoryLimitMiB)
		// Swarm sets no cpuset: the quota is the cap, and none for "shares"
		if !limits.Equal(l.QuotaCores, l.Declared.Cores) || l.AncestorQuotaCores != 0 || l.MemoryLimitMiB != l.Declared.MemoryMiB {
			t.Errorf("%s: enforced quota %.3f cores (enclosing %.3f) / %d MiB, declared %s", l.Label(), l.QuotaCores, l.AncestorQuotaCores, l.MemoryLimitMiB, describe(l.Declared))
		}
	}
}
