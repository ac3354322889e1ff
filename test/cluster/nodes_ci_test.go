//go:build multinode

package cluster

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

const killNodeSpec = "test/cluster/testdata/kill-node-sweep.hcl"

// The multi-node test CI runs (`just test-nodes-ci`, called by `just
// test`; issue 24: "CI keeps one multi-node test, a small cluster, one
// fault"): nodes=3 servers=1 brought up, the images pushed through the
// registry on the client node, and one sweep from this machine (as
// `nodes.sh env` points it, the Nomad and Consul agents of the client
// node) in which a worker holding an instance of Taewa is killed under
// load. The fault's record must hold what a user reads in the report: the
// worker hit and its instance, the load's errors while it was gone,
// recovery measured (the lost instance placed and healthy on the other
// worker), the node started again after the step; then the next step runs
// valid on the whole deployment: the sweep went on. Last, down leaves no
// container, network, volume or cgroup of the cluster. A few minutes:
//
//	NODES_NAME=gt NODES_SUBNET=10.84.0.0/24 go test -tags multinode -count=1 -timeout 20m -v -run TestNodesKillNodeSweep ./test/cluster/
func TestNodesKillNodeSweep(t *testing.T) {
	images := []string{taewaImage, "orchbench/orchbench:local", "orchbench/pause:local"}
	requireNodeHost(t, "just images taewa orchbench pause", images...)
	requireNoNodes(t)
	bin := buildStatic(t)
	down := false
	t.Cleanup(func() {
		if !down {
			runScript(t, nil, "nodes.sh", "down")
		}
	})
	began := time.Now()
	// Nodes of the machine's CPUs: Taewa's own quota (0.1 core an
	// instance) bounds what the step uses, and a budget under the machine
	// would cap what a variant declares uncapped (the limits gate refuses
	// that). A run on 0.4-core nodes once saw half of every declared quota
	// enforced (5001 µs per 100000 for 260 of 5198 MHz), while the nodes'
	// cpusets had been narrowed to one CPU from outside for a measurement
	// (the likely cause, not verified: a client started then would count
	// one core)
	cpus := fmt.Sprintf("node_cpus=%d", runtime.NumCPU())
	if r := runScript(t, []string{"ORCHBENCH_BIN=" + bin}, "nodes.sh", "up", "nodes=3", "servers=1", cpus, "node_memory=1g"); r.err != nil {
		t.Fatalf("nodes.sh up 3 1: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	t.Logf("figure: nodes.sh up 3 1 in %.1f s", time.Since(began).Seconds())
	began = time.Now()
	if r := runScript(t, nil, "nodes.sh", append([]string{"push-images"}, images...)...); r.err != nil {
		t.Fatalf("push-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	t.Logf("figure: push-images of %d images in %.1f s", len(images), time.Since(began).Seconds())
	checkPrePulled(t, images)
	checkClusterStatus(t)

	dir := t.TempDir()
	began = time.Now()
	sweep := exec.Command(bin, "sweep", "-f", killNodeSpec, "--vm", "", "--dir", filepath.Join(dir, "results"), "--reports", filepath.Join(dir, "reports"))
	sweep.Dir = repoRoot(t)
	sweep.Env = append(sweep.Environ(), killNodeSweepEnv(t)...)
	out, err := sweep.CombinedOutput()
	t.Logf("sweep in %.1f s:\n%s", time.Since(began).Seconds(), out)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	checkKillNodeSweep(t, filepath.Join(dir, "results"))

	began = time.Now()
	r := runScript(t, nil, "nodes.sh", "down")
	down = true
	if r.err != nil {
		t.Fatalf("nodes.sh down: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	t.Logf("figure: down in %.1f s", time.Since(began).Seconds())
	checkNothingLeft(t)
}

// checkClusterStatus runs `just cluster-status`, the recipe a user runs,
// with the nodes up: it must be their status (every node, one leader of
// each control plane), not the embedded cluster's.
func checkClusterStatus(t *testing.T) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "justw"), "cluster-status")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	// the client node's VictoriaMetrics and Nomad Autoscaler (nodes-infra.sh) too
	for _, want := range []string{clusterName + "-server1", clusterName + "-worker2", clusterName + "-client", "ok: every node is up with its agents; one leader each",
		"victoriametrics: healthy on " + nodeAddr(client) + ":8428", "nomad autoscaler: healthy on " + nodeAddr(client) + ":7072"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("just cluster-status with the nodes up does not say %q (%v):\n%s", want, err, out)
		}
	}
	if err != nil {
		t.Errorf("just cluster-status with the nodes up: %v\n%s", err, out)
	}
}

// killNodeSweepEnv is `nodes.sh env` as environment entries (the
// registry among them), with Nomad and
// Consul at the client node's own agents: they forward to the server, as
// a real cluster's local agents do (docs/faults.md), and the cluster named.
func killNodeSweepEnv(t *testing.T) []string {
	t.Helper()
	r := runScript(t, nil, "nodes.sh", "env")
	if r.err != nil {
		t.Fatalf("nodes.sh env: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	var env []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		kv, ok := strings.CutPrefix(sc.Text(), "export ")
		// DOCKER_HOST (the Swarm API at a manager) is left out: the sweep
		// runs on Nomad alone, and the node containers its fault acts on
		// are the project's dockerd's (before f9b30c9 the sweep asked the
		// manager for them and found none)
		if ok && !strings.HasPrefix(kv, "DOCKER_HOST=") {
			env = append(env, kv)
		}
	}
	if len(env) == 0 {
		t.Fatalf("nodes.sh env exported nothing:\n%s", r.stdout)
	}
	// NODES_NAME names the machines the sweep's node faults act on; unset,
	// the sweep would take the single node and refuse them, and build its
	// images on the Swarm manager (a sweep after `eval "$(cluster/nodes.sh
	// env)"` once did: every step invalid, no image)
	if !slices.Contains(env, "NODES_NAME="+clusterName) {
		t.Fatalf("nodes.sh env does not export NODES_NAME=%s:\n%s", clusterName, r.stdout)
	}
	local := "http://" + nodeAddr(client)
	return append(env, "NOMAD_ADDR="+local+":4646", "CONSUL_HTTP_ADDR="+local+":8500")
}

// checkKillNodeSweep holds the archive to the fault's record and to the
// step after it.
func checkKillNodeSweep(t *testing.T, dir string) {
	t.Helper()
	archive := results.Archive{Dir: dir}
	id, err := archive.Resolve("ci-kill-node")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := archive.LoadSteps(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].App != "kill-node" || steps[1].App != "after" {
		var got []string
		for _, s := range steps {
			got = append(got, s.App)
		}
		t.Fatalf("steps %v, want kill-node then after", got)
	}
	faulted, after := steps[0], steps[1]
	if faulted.Outcome == results.OutcomeInvalid {
		t.Errorf("the fault step is invalid %v: a gate took the injected fault for something else", faulted.Reasons)
	}
	var rec results.FaultRecord
	if err := remarshal(faulted.Metadata["fault"], &rec); err != nil {
		t.Fatalf("the fault step's record: %v", err)
	}
	t.Logf("figure: %s", rec.NodeRecovery())
	switch {
	case rec.Kind != orchestrator.FaultKillNode || rec.Error != "":
		t.Fatalf("fault %s not injected: %q", rec.Kind, rec.Error)
	case rec.Node == nil || rec.Node.Role != "worker" || !strings.Contains(rec.Node.Chosen, "runs an instance") || len(rec.OnNode) == 0:
		t.Errorf("the node hit %+v with instances %+v, want a worker running an instance", rec.Node, rec.OnNode)
	}
	if rec.AllHealthySeconds == nil {
		t.Errorf("no recovery measured: %s", rec.AllHealthyNote)
	}
	if len(rec.Windows) < 2 || rec.Windows[0].Requests == 0 || rec.Windows[1].Errors == 0 {
		t.Errorf("load windows %+v: want requests before the fault and errors counted during it", rec.Windows)
	}
	if rec.RestoredSeconds == nil || rec.RestoreError != "" {
		t.Errorf("the node was not started again after the step: %s", rec.RestoreError)
	}
	if after.Outcome != results.OutcomeValid {
		t.Errorf("the step after the fault: %s %v, want valid", after.Outcome, after.Reasons)
	}
}

// checkPrePulled: push-images left every image in the dockerd of every node
// that runs tasks, so that no orchestrator's first task on a node waits for
// a pull the next one is spared (Nomad and Swarm share a node's dockerd).
func checkPrePulled(t *testing.T, images []string) {
	t.Helper()
	for _, role := range []string{"worker", "client"} {
		nodes := strings.Fields(dockerOut(t, "ps", "--filter", "label=orchbench.nodes="+clusterName, "--filter", "label=orchbench.node.role="+role, "--format", "{{.Names}}"))
		if len(nodes) == 0 {
			t.Fatalf("no %s node is running", role)
		}
		for _, node := range nodes {
			have := "\n" + dockerOut(t, "exec", node, "docker", "images", "--format", "{{.Repository}}:{{.Tag}}") + "\n"
			for _, img := range images {
				if !strings.Contains(have, "/"+img+"\n") {
					t.Errorf("%s's dockerd lacks %s after push-images; it has:%s", node, img, have)
				}
			}
		}
	}
}
