//go:build multinode

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/test/wrongsetup"
)

// TestEveryGateCanFail on the emulated nodes (issue 24, acceptance: "with
// the harness kept from reading the machine's /proc and /sys for tasks,
// every gate still decides"): the harness runs from the client node, whose
// own /proc holds none of the workers' tasks, and every wrong setup of
// wrongsetup.Nomad runs on the workers and must end as its row says. What
// the single-node test arranges on its own machine is arranged on the
// nodes: the forwarder runs on the instance's worker, on another port
// (packProxied says why there); the CPU quota is set by the instance's
// worker's dockerd; the load job is killed through Nomad; the stray
// shipper runs on every worker. Every row runs; three differ in how, not
// in what they test:
//
//   - the faulty server runs from an image (Taewa's with faulty-server.js
//     in place of its server) under the docker driver: the nodes' Nomad
//     clients enable raw_exec, not exec, and have no Node.js of their own;
//   - the proxied row's instance is placed on the forwarder's worker;
//   - every row declares shipping = "off" (the nodes run no node agent), and
//     shipping-stray runs in a sweep of its own, since its stray shipper
//     would be every other row's too.
//
// It brings up nodes=3 servers=1 (and down after) unless the cluster
// NODES_NAME is up already; a few minutes:
//
//	NODES_NAME=gt NODES_SUBNET=10.84.0.0/24 go test -tags multinode -count=1 -timeout 60m -v -run TestNodesEveryGateCanFail ./test/cluster/
func TestNodesEveryGateCanFail(t *testing.T) {
	h := newGatesHarness(t)
	rows := packProxied(wrongsetup.OnNodes(wrongsetup.Nomad))
	stray, rest := wrongsetup.Split(rows, "shipping-stray")

	fwd := h.startForwarder(t, frontendWorker, "taewa-proxied")
	h.writeClientFile(t, "forward.lua", fmt.Sprintf("function setup(thread)\n  thread.addr = %q\nend\n", fwd))
	fill := strings.NewReplacer(wrongsetup.FaultyVars, fmt.Sprintf("driver = \"docker\", image = %q", h.faultyImage), "{forward_lua}", gatesWorkDir+"/forward.lua")

	// the unlimited variant, deployed ahead from the client node, then given
	// a CPU quota by its worker's dockerd: the sweep reuses the running job
	// and must read the quota on that worker
	h.inClient(t, "./orchbench", "pack", "run", "taewa", "--wait", "--var", "variant=unlimited", "--var", "job_name=taewa-quota", "--var", "resource_scale=0.25")
	t.Cleanup(func() {
		h.inClientTry("./orchbench", "pack", "destroy", "taewa", "--var", "variant=unlimited", "--var", "job_name=taewa-quota")
	})
	quotaNode, quotaAlloc := h.runningAlloc(t, "taewa-quota")
	dockerOut(t, "exec", quotaNode, "docker", "update", "--cpus", "0.5", "taewa-"+quotaAlloc)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan string, 1)
	go func() {
		if alloc, err := wrongsetup.KillLoadJob(ctx, h.nomadAPI, "killed-", 2*time.Second); err == nil {
			killed <- alloc
		} else if ctx.Err() == nil {
			t.Errorf("kill the load task: %v", err)
		}
	}()
	dir := h.sweep(t, "validity-nodes", rest, fill)
	cancel()
	select {
	case alloc := <-killed:
		t.Logf("killed load allocation %s mid-step", alloc)
	default:
		t.Fatal("the load job of the killed step was never found to kill")
	}
	steps := wrongsetup.Check(t, dir, "validity-nodes", rest, strings.NewReplacer("{fwd}", fwd))
	wrongsetup.CheckOverload(t, steps)
	h.checkWhereTheyRan(t, steps, quotaNode)

	// a shipper a user started by hand on every worker: wherever the
	// step's instance lands, the shipping gate reads it through that
	// worker's probe
	for _, w := range h.workers {
		h.startStrayShipper(t, w)
	}
	dir = h.sweep(t, "validity-nodes-stray", stray, fill)
	steps = wrongsetup.Check(t, dir, "validity-nodes-stray", stray, strings.NewReplacer())
	h.checkWhereTheyRan(t, steps, "")
}

// frontendWorker is the worker that carries orchbench.frontend=true,
// where placement = "packed" puts every instance.
var frontendWorker = clusterName + "-worker1"

// packProxied places the proxied row's instance on frontendWorker, where
// the test's forwarder listens on another port. The generator loads only
// the hosts of registered instances (the sweep's --allow-host): a thread
// aimed at any other node is refused by the generator itself (the load job
// exits 1, and the load gate, not the load-path gate, makes the step
// invalid). A relay on the instance's own host, as a sidecar proxy would
// be, passes that check, and only the load-path gate can tell it apart.
func packProxied(rows []wrongsetup.Row) []wrongsetup.Row {
	out := append([]wrongsetup.Row{}, rows...)
	for i, r := range out {
		if r.App == "proxied" {
			out[i].Block = strings.Replace(r.Block, `job_name = "taewa-proxied"`, `placement = "packed", job_name = "taewa-proxied"`, 1)
		}
	}
	return out
}

// checkWhereTheyRan holds the steps to the nodes their rows are about: the
// instances on workers (the quota row's on quotaNode, where the quota was
// set), the generators and tools on the client node, so that every fact a
// gate decided by came from a node other than the harness's own.
func (h *gatesHarness) checkWhereTheyRan(t *testing.T, steps []results.StepResult, quotaNode string) {
	t.Helper()
	for _, s := range steps {
		lims, ok := stepLimits(t, s)
		if !ok {
			continue
		}
		for _, l := range lims {
			if !h.isWorker(l.Node) {
				t.Errorf("%s: an instance ran on %q, not on a worker (%v)", s.App, l.Node, h.workers)
			}
			if s.App == "quota" && l.Node != quotaNode {
				t.Errorf("quota: the instance read on %s, but the quota was set on %s", l.Node, quotaNode)
			}
			if s.App == "proxied" && l.Node != frontendWorker {
				t.Errorf("proxied: the instance ran on %s, not beside the forwarder on %s", l.Node, frontendWorker)
			}
		}
	}
	for _, prefix := range []string{"orchbench-loadgen/dispatch-", "orchbench-loadtool"} {
		jobs, _, err := h.nomadAPI.Jobs().PrefixList(prefix)
		if err != nil {
			t.Fatalf("list %s jobs: %v", prefix, err)
		}
		for _, j := range jobs {
			allocs, _, err := h.nomadAPI.Jobs().Allocations(j.ID, true, nil)
			if err != nil {
				t.Fatalf("allocations of %s: %v", j.ID, err)
			}
			for _, a := range allocs {
				if a.NodeName != client {
					t.Errorf("load job %s ran on %s, not on the client node %s", j.ID, a.NodeName, client)
				}
			}
		}
	}
}

// stepLimits are the instances a step read limits of, with their nodes;
// false when the step archived none (it ended before reading them).
func stepLimits(t *testing.T, s results.StepResult) ([]taskLimits, bool) {
	t.Helper()
	raw, ok := s.Metadata["limits"]
	if !ok {
		return nil, false
	}
	var out []taskLimits
	if err := remarshal(raw, &out); err != nil {
		t.Fatalf("%s: the step's limits: %v", s.App, err)
	}
	return out, len(out) > 0
}

// runningAlloc is the node and ID of job's running allocation.
func (h *gatesHarness) runningAlloc(t *testing.T, job string) (node, id string) {
	t.Helper()
	allocs, _, err := h.nomadAPI.Jobs().Allocations(job, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range allocs {
		if a.ClientStatus == "running" {
			return a.NodeName, a.ID
		}
	}
	t.Fatalf("no running allocation of %s", job)
	return "", ""
}

// startForwarder runs the forwarder on node, relaying to a healthy
// instance of service that node's Consul agent names, and returns the
// address it listens at; it is stopped (by its PID) when the test ends.
func (h *gatesHarness) startForwarder(t *testing.T, node, service string) string {
	t.Helper()
	dockerOut(t, "cp", h.forwarder, node+":/tmp/gates-forwarder")
	addr := nodeAddr(node)
	pid := dockerOut(t, "exec", node, "sh", "-c", fmt.Sprintf(
		"/tmp/gates-forwarder --listen %s:0 --consul http://%s:8500 --service %s >/tmp/gates-forwarder.out 2>&1 & echo $!", addr, addr, service))
	t.Cleanup(func() { dockerTry("exec", node, "kill", pid) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := dockerTry("exec", node, "cat", "/tmp/gates-forwarder.out")
		if strings.HasPrefix(out, addr+":") {
			t.Logf("forwarder on %s at %s (pid %s)", node, out, pid)
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the forwarder on %s did not listen: %q", node, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startStrayShipper runs an executable named vector (a copy of sleep) on
// node until the test ends: any process of that name is a shipper to the
// shipping gate.
func (h *gatesHarness) startStrayShipper(t *testing.T, node string) {
	t.Helper()
	pid := dockerOut(t, "exec", node, "sh", "-c", "cp /bin/sleep /tmp/vector && { /tmp/vector 1800 >/dev/null 2>&1 & echo $!; }")
	t.Cleanup(func() { dockerTry("exec", node, "kill", pid) })
}

// sweep runs rows as the sweep name from the client node, as an operator
// there would (Nomad and Consul at the server, nothing pushed anywhere),
// and copies its archive out for wrongsetup.Check.
func (h *gatesHarness) sweep(t *testing.T, name string, rows []wrongsetup.Row, fill *strings.Replacer) string {
	t.Helper()
	h.writeClientFile(t, name+".hcl", wrongsetup.Spec(name, "nomad", rows, fill))
	began := time.Now()
	out, err := h.inClientTry("timeout", "2400", "./orchbench", "sweep", "-f", name+".hcl", "--vm", "", "--dir", "results-"+name, "--reports", "reports")
	t.Logf("sweep %s (%d rows) from %s in %.0f s:\n%s", name, len(rows), client, time.Since(began).Seconds(), out)
	if err != nil {
		t.Fatalf("sweep %s: %v", name, err)
	}
	local := t.TempDir()
	dockerOut(t, "cp", client+":"+gatesWorkDir+"/results-"+name, local)
	return filepath.Join(local, "results-"+name)
}

// inClient runs a command in the client node's work directory with
// Nomad's and Consul's addresses at the server.
func (h *gatesHarness) inClient(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.inClientTry(args...)
	if err != nil {
		t.Fatalf("in %s: %s: %v\n%s", client, strings.Join(args, " "), err, out)
	}
	return out
}

func (h *gatesHarness) inClientTry(args ...string) (string, error) {
	srv := nodeAddr(server1)
	cmd := exec.Command("docker", append([]string{"exec", "-w", gatesWorkDir, "-e", "NOMAD_ADDR=http://" + srv + ":4646",
		"-e", "CONSUL_HTTP_ADDR=http://" + srv + ":8500", client}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// writeClientFile writes body to name in the client node's work directory.
func (h *gatesHarness) writeClientFile(t *testing.T, name, body string) {
	t.Helper()
	local := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(local, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	dockerOut(t, "cp", local, client+":"+gatesWorkDir+"/"+name)
}
