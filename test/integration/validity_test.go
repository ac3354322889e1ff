//go:build integration

package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/test/wrongsetup"
)

// Every gate must be able to fail. One sweep runs a deliberately wrong
// setup per configuration on the real cluster, and each must end with the
// right outcome and a reason that names what was wrong: the rows of
// wrongsetup.Nomad, one per gate, and wrongsetup.LocustErrors, a tool's
// failed requests that are measured errors. The same sweep runs on Swarm and
// Kubernetes with the rows that need no exec driver
// (validity_others_test.go), and on the emulated nodes with the harness
// on the client node (test/cluster, TestNodesEveryGateCanFail).
//
// The faulty servers are test/integration/testdata/faulty-server.js, run
// by the taewa pack's exec driver, so they are scheduled, registered and
// checked like the real service. The Redis-flush case (dataset gate) is
// TestDatasetMarkerAndVerification.
func TestEveryGateCanFail(t *testing.T) {
	work := t.TempDir()
	faultyServer, err := filepath.Abs(filepath.Join("testdata", "faulty-server.js"))
	if err != nil {
		t.Fatal(err)
	}
	fwd := startForwarder(t, "taewa-proxied")
	script := fmt.Sprintf("function setup(thread)\n  thread.addr = %q\nend\n", fwd)
	if err := os.WriteFile(filepath.Join(work, "forward.lua"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer(wrongsetup.FaultyVars, fmt.Sprintf("driver = \"exec\", app_source = %q", faultyServer), "{forward_lua}", filepath.Join(work, "forward.lua"))
	rows := append(slices.Clone(wrongsetup.Nomad), wrongsetup.LocustErrors)
	spec := wrongsetup.Spec("validity", "nomad", rows, fill)
	specFile := filepath.Join(work, "validity.hcl")
	if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}

	// The unlimited variant, deployed ahead, then given a CPU quota behind
	// Nomad's back: the sweep reuses the running job and must notice.
	must(t, orchbench, "pack", "run", "taewa", "--wait", "--var", "variant=unlimited", "--var", "job_name=taewa-quota", "--var", "resource_scale=0.25")
	t.Cleanup(func() {
		sh(root, orchbench, "pack", "destroy", "taewa", "--var", "variant=unlimited", "--var", "job_name=taewa-quota")
	})
	must(t, "docker", "update", "--cpus", "0.5", containerOf(t, "taewa-quota", "taewa"))

	// a stray log shipper: any executable named vector is one to the gate
	stray := filepath.Join(work, "vector")
	must(t, "cp", "/bin/sleep", stray)
	shipper := exec.Command(stray, "900")
	if err := shipper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shipper.Process.Kill(); _ = shipper.Wait() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan string, 1)
	go killLoadJobOf(ctx, t, "killed-", 2*time.Second, killed)

	dir := filepath.Join(work, "results")
	must(t, orchbench, "sweep", "-f", specFile, "--dir", dir, "--reports", filepath.Join(work, "reports"))
	select {
	case alloc := <-killed:
		t.Logf("killed load allocation %s mid-step", alloc)
	default:
		t.Fatal("the load job of the killed step was never found to kill")
	}

	steps := wrongsetup.Check(t, dir, "validity", rows, strings.NewReplacer("{fwd}", fwd))
	wrongsetup.CheckOverload(t, steps)
}

// startForwarder relays TCP connections to a healthy instance of service,
// found in Consul at each accept: the proxy the load-path gate must see.
func startForwarder(t *testing.T, service string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go wrongsetup.Forward(l, func() (string, error) { return wrongsetup.ConsulInstance("http://127.0.0.1:8500", service) })
	return l.Addr().String()
}

// containerOf names the docker container of a job's task (Nomad names it
// <task>-<alloc ID>).
func containerOf(t *testing.T, job, task string) string {
	t.Helper()
	c, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	allocs, _, err := c.Jobs().Allocations(job, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range allocs {
		if a.ClientStatus == "running" {
			return task + "-" + a.ID
		}
	}
	t.Fatalf("no running allocation of %s", job)
	return ""
}

// killLoadJobOf kills the load task of the first load job of a step
// named stepPrefix… once it has run for after, and reports its allocation.
func killLoadJobOf(ctx context.Context, t *testing.T, stepPrefix string, after time.Duration, killed chan<- string) {
	c, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		t.Error(err)
		return
	}
	alloc, err := wrongsetup.KillLoadJob(ctx, c, stepPrefix, after)
	switch {
	case err == nil:
		killed <- alloc
	case ctx.Err() == nil:
		t.Errorf("kill the load task: %v", err)
	}
}
