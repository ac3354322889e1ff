//go:build multinode

package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The harness run from the client node decides every gate through the
// workers' node probes (docs/node-probe.md, issue 24 item 3): the client
// node's own /proc holds none of the workers' tasks (the client is made
// ineligible, so the app lands on a worker), so a read of this machine's
// kernel in place of the task's node would fail, not pass. Then two
// deliberately wrong setups make the same step invalid, naming the node:
// a resolver that points each node at another node's probe, and the
// workers' probes not answering. Last, the probe as a Swarm global service.
// Run it alone, it takes minutes; it brings up nodes=3 servers=1 (and down
// after) unless the cluster NODES_NAME is up already:
//
//	NODES_NAME=pr NODES_SUBNET=10.78.0.0/24 go test -tags multinode -count=1 -timeout 30m -v -run TestNodesProbe ./test/cluster/
func TestNodesProbeSweepFromTheClientNode(t *testing.T) {
	h := newProbeHarness(t)

	t.Run("valid through the workers' probes", func(t *testing.T) {
		r := h.sweep(t)
		for _, w := range h.workers {
			if !strings.Contains(r.output, w+"="+nodeAddr(w)+":7070") {
				t.Errorf("the sweep did not find %s's probe through Nomad:\n%s", w, r.output)
			}
		}
		if r.step.Outcome != "valid" {
			t.Fatalf("outcome %s %v, want valid:\n%s", r.step.Outcome, r.step.Reasons, r.output)
		}
		for _, name := range []string{"limits", "load-path", "shipping", "healthy", "load"} {
			g, ok := r.gate(name)
			if !ok || !g.Passed || g.NotChecked {
				t.Errorf("gate %s: %+v, want it checked and passed", name, g)
			}
		}
		lim := r.limits(t)
		if len(lim) != 1 || !h.isWorker(lim[0].Node) {
			t.Fatalf("limits %+v, want one instance on a worker (%v)", lim, h.workers)
		}
		task := lim[0]
		if task.EffectiveCores <= 0 || task.ImageID == "" || !strings.Contains(task.CgroupPath, "/docker/") {
			t.Errorf("limits of the task on %s not read from its node: %+v", task.Node, task)
		}
		// the load went to the worker's address, and the worker's probe
		// found the accepting process in the task's cgroup
		lp, _ := r.gate("load-path")
		if !strings.Contains(lp.Detail, nodeAddr(task.Node)+":") || strings.Contains(lp.Detail, "not seen") {
			t.Errorf("load path %q: want the acceptor seen at %s", lp.Detail, nodeAddr(task.Node))
		}
		// the client node itself cannot see that process: a local read
		// would have failed
		if out, _ := dockerTry("exec", client, "sh", "-c", "grep -l "+lastPart(task.CgroupPath)+" /proc/[0-9]*/cgroup"); strings.TrimSpace(out) != "" {
			t.Errorf("the client node sees the worker's task in its own /proc (%s): the test would not catch a local read", out)
		}
		t.Logf("figure: valid step from the client node in %.1f s (task on %s, %.3f cores)", r.seconds, task.Node, task.EffectiveCores)
	})

	t.Run("a resolver pointing each node at another node's probe", func(t *testing.T) {
		nodes := append(append([]string{}, h.workers...), client)
		var flags []string
		for i, n := range nodes {
			wrong := nodes[(i+1)%len(nodes)]
			flags = append(flags, "--node-probe", n+"="+nodeAddr(wrong)+":7070")
		}
		r := h.sweep(t, flags...)
		if r.step.Outcome != "invalid" {
			t.Fatalf("outcome %s, want invalid:\n%s", r.step.Outcome, r.output)
		}
		if !r.reasonSays("this probe serves node", "the harness has the wrong address for node") {
			t.Fatalf("reasons %q do not name the mis-wired node", r.step.Reasons)
		}
	})

	t.Run("the workers' probes not answering", func(t *testing.T) {
		for _, w := range h.workers {
			h.blockProbe(t, w)
		}
		r := h.sweep(t)
		if r.step.Outcome != "invalid" {
			t.Fatalf("outcome %s, want invalid:\n%s", r.step.Outcome, r.output)
		}
		if !r.reasonSays("node "+clusterName+"-worker", "probe at http://"+subnetPrefix+".2") {
			t.Fatalf("reasons %q do not name the node and its probe", r.step.Reasons)
		}
		if !strings.Contains(r.output, "warning: node "+clusterName+"-worker") {
			t.Errorf("the sweep did not warn before the step that a probe does not answer:\n%s", r.output)
		}
	})

	t.Run("the Swarm global service", func(t *testing.T) { swarmGlobalService(t, h) })
}

// swarmGlobalService: the Swarm global service runs the same probe from
// the orchbench image, in a container without the host's PID namespace
// (the node's /proc mounted instead), on another port than the Nomad
// job's; the Swarm API alone finds it, and each probe answers for its node.
func swarmGlobalService(t *testing.T, h *probeHarness) {
	image := h.probeImage(t)
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "cluster", "swarm-probe.sh"))
	if err != nil {
		t.Fatal(err)
	}
	up := exec.Command("docker", "exec", "-i", "-e", "PROBE_IMAGE="+image, server1, "bash", "-s", "up", "7071")
	up.Stdin = strings.NewReader(string(script))
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("swarm-probe.sh up 7071 on %s: %v\n%s", server1, err, out)
	}
	t.Cleanup(func() { dockerTry("exec", server1, "docker", "service", "rm", "node-probe") })
	dockerOut(t, "cp", h.bin, server1+":/tmp/orchbench")
	out := dockerOut(t, "exec", server1, "/tmp/orchbench", "node-probe", "list", "--orchestrator", "swarm")
	for _, n := range append(append([]string{}, h.workers...), client) {
		if !regexp.MustCompile(`(?m)^` + n + ` +http://` + regexp.QuoteMeta(nodeAddr(n)) + `:7071 +yes$`).MatchString(out) {
			t.Errorf("%s's probe of the global service is not listed as answering:\n%s", n, out)
		}
	}
	// the service's probe reads the node as the Nomad job's does
	for _, port := range []string{"7070", "7071"} {
		w := h.workers[0]
		got := dockerOut(t, "exec", client, "curl", "-sf", "-X", "POST", "-H", "X-Orchbench-Node: "+w, "-d", `{"pid":1}`,
			"http://"+nodeAddr(w)+":"+port+"/v1/cpu-cgroup")
		if !strings.Contains(got, clusterName+"-nodes/") {
			t.Errorf("the probe on %s:%s read pid 1's cgroup as %s, want the node's own", w, port, got)
		}
	}
}

func lastPart(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
