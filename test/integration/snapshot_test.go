//go:build integration

package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
)

// snapshotJob is a job of its own, so the test neither reuses nor stops
// anyone's social-network-baseline.
const snapshotJob = "sn-snapshot"

// snapshotDeployBound is the target: a fresh deployment of the default
// dataset at resource_scale 0.03 verified within this, where loading it
// through the API took 14-20 minutes.
const snapshotDeployBound = 90 * time.Second

// TestSnapshotDeployment deploys the social network with the default
// dataset (962 users) from the snapshot cache, fresh, and times it to a
// passed verification; then SIGKILLs Redis, FerretDB and memcached, and
// expects every timeline back after the restarts, the posts read from
// FerretDB since memcached comes back empty.
func TestSnapshotDeployment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ad, err := nomad.New("", "")
	if err != nil {
		t.Fatal(err)
	}
	// ORCHBENCH_IT_IMAGE_TAG runs it on images built with another IMAGE_TAG
	// than "local", beside a cluster whose :local images others deploy
	tag := os.Getenv("ORCHBENCH_IT_IMAGE_TAG")
	if tag == "" {
		tag = "local"
	}
	vars := []string{"--var", "job_name=" + snapshotJob, "--var", "resource_scale=" + snResourceScale, "--var", "image_tag=" + tag}

	// The snapshot images, made from the cache, or the first time on a
	// machine from a snapshot loaded once (minutes): not part of a deployment.
	began := time.Now()
	must(t, orchbench, "dsb", "social-network", "restore", "--image-tag", tag)
	t.Logf("snapshot images ready in %s", time.Since(began).Round(100*time.Millisecond))

	sh(root, orchbench, append([]string{"pack", "destroy", "social-network"}, vars...)...)
	began = time.Now()
	out := must(t, orchbench, append([]string{"pack", "run", "social-network", "--wait"}, vars...)...)
	took := time.Since(began)
	defer must(t, orchbench, append([]string{"pack", "destroy", "social-network"}, vars...)...)
	for _, want := range []string{"on nomad deployed", "prepare: images orchbench/ferretdb:" + tag + "-ds-u962-p10-s1", "verify: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("pack run output lacks %q", want)
		}
	}
	if strings.Contains(out, "setup of") {
		t.Error("a deployment from the snapshot loaded through the API")
	}
	t.Logf("fresh deployment from the snapshot, healthy and verified: %s", took.Round(100*time.Millisecond))
	if took > snapshotDeployBound {
		t.Errorf("fresh deployment to a verified dataset took %s, over the %s target", took.Round(time.Second), snapshotDeployBound)
	}

	dep := deploymentOf(t, ad, snapshotJob)
	eps, err := ad.Endpoints(ctx, dep, snapshotJob+"-frontend")
	if err != nil {
		t.Fatal(err)
	}
	frontend := "http://" + eps[0].HostPort()
	before := homeTimelineSizes(t, frontend)

	for _, task := range []string{"redis", "ferretdb", "memcached"} {
		killTask(t, ad, snapshotJob, task)
	}
	if err := ad.WaitHealthy(ctx, dep, 3*time.Minute); err != nil {
		t.Fatalf("after killing the stores: %v", err)
	}
	if after := homeTimelineSizes(t, frontend); after != before {
		t.Errorf("home timelines changed across the stores' restarts: %s before, %s after", before, after)
	}
	must(t, orchbench, "dsb", "social-network", "verify", "--frontend", frontend)
}

// homeTimelineSizes are the body sizes of a few users' first home page.
func homeTimelineSizes(t *testing.T, frontend string) string {
	t.Helper()
	var sizes []string
	for _, user := range []int{1, 5, 100, 500} {
		resp, err := http.Get(fmt.Sprintf("%s/wrk2-api/home-timeline/read?user_id=%d&start=0&stop=10", frontend, user))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sizes = append(sizes, fmt.Sprintf("user %d: %d bytes", user, len(b)))
		if resp.StatusCode != http.StatusOK || len(b) < 2000 {
			t.Errorf("home timeline of user %d: %d, %d bytes", user, resp.StatusCode, len(b))
		}
	}
	return strings.Join(sizes, ", ")
}

// killTask SIGKILLs the task and waits until Nomad has restarted it in place.
func killTask(t *testing.T, ad *nomad.Orchestrator, job, task string) {
	t.Helper()
	allocs, _, err := ad.Client.Jobs().Allocations(job, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, stub := range allocs {
		if stub.TaskGroup != task || stub.ClientStatus != "running" {
			continue
		}
		alloc, _, err := ad.Client.Allocations().Info(stub.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		restarts := alloc.TaskStates[task].Restarts
		if err := ad.Client.Allocations().Signal(alloc, nil, task, "SIGKILL"); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, task+" restarted", func() error {
			a, _, err := ad.Client.Allocations().Info(stub.ID, nil)
			if err != nil {
				return err
			}
			if st := a.TaskStates[task]; st == nil || st.Restarts <= restarts || st.State != "running" {
				return fmt.Errorf("%s: %+v", task, st)
			}
			return nil
		})
		return
	}
	t.Fatalf("no running allocation of %s", task)
}
