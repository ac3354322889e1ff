//go:build multinode

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testenv"
)

// The emulated multi-node cluster end to end (cluster/nodes.sh, docs/cluster.md):
// 3 servers, 3 workers and a client come up with one leader per control
// plane; a job spread over the workers answers from the client node, its
// tasks inside their node's CPU budget; the Nomad leader's node dies and a
// new leader follows; down leaves nothing. Run it alone, it takes minutes:
//
//	go test -tags multinode -count=1 -timeout 20m -v -run TestNodes ./test/cluster/
func TestNodesUpJobLeaderLossDown(t *testing.T) {
	requireNodeHost(t, "just images taewa", taewaImage)
	requireNoNodes(t)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// the nodes' agent logs say why, before down removes them
		for _, n := range append(append([]string{}, servers...), workers...) {
			if out, err := exec.Command("docker", "exec", n, "sh", "-c", "tail -n 15 /var/log/obn/*.log").CombinedOutput(); err == nil {
				t.Logf("%s logs:\n%s", n, out)
			}
		}
		runScript(t, nil, "nodes.sh", "down")
	})

	began := time.Now()
	up := runScript(t, nil, "nodes.sh", "up", "4", "3")
	if up.err != nil {
		t.Fatalf("nodes.sh up 4 3: %v\n%s%s", up.err, up.stdout, up.stderr)
	}
	t.Logf("figure: up 4 3 (7 nodes) in %.1f s", time.Since(began).Seconds())
	if !strings.Contains(up.stdout, "ok: every node is up") {
		t.Fatalf("up did not end with a clean status:\n%s", up.stdout)
	}

	checkControlPlanes(t)
	checkNomadClients(t)
	checkSwarm(t)

	began = time.Now()
	if r := runScript(t, nil, "nodes.sh", "load-images", taewaImage); r.err != nil {
		t.Fatalf("load-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	t.Logf("figure: load-images %s into 4 nodes in %.1f s", taewaImage, time.Since(began).Seconds())

	allocs := runSpreadJob(t)
	for _, a := range allocs {
		checkAnswersFromClient(t, a)
		checkTaskInsideNodeBudget(t, a)
	}

	checkLeaderLoss(t)

	began = time.Now()
	down := runScript(t, nil, "nodes.sh", "down")
	if down.err != nil {
		t.Fatalf("nodes.sh down: %v\n%s%s", down.err, down.stdout, down.stderr)
	}
	t.Logf("figure: down in %.1f s", time.Since(began).Seconds())
	checkNothingLeft(t)
	if again := runScript(t, nil, "nodes.sh", "down"); again.err != nil {
		t.Errorf("a second down failed: %v\n%s", again.err, again.stdout)
	}
}

// requireNodeHost stops the test as missing unless this machine can run
// emulated nodes (root, a dockerd) and has images, which build names the
// command that builds.
func requireNodeHost(t *testing.T, build string, images ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "not root: nodes need the cgroup tree and a dockerd")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		testenv.Missing(t, "no docker daemon answers: %v", err)
	}
	for _, img := range images {
		if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
			testenv.Missing(t, "%s is not built (%s)", img, build)
		}
	}
}

const taewaImage = "orchbench/taewa:local"

// clusterName and subnetPrefix follow nodes.sh's NODES_NAME and
// NODES_SUBNET, so that two worktrees can each run this test on a cluster
// of their own.
var (
	clusterName  = envOr("NODES_NAME", "obn")
	subnetPrefix = strings.TrimSuffix(envOr("NODES_SUBNET", "10.77.0.0/24"), ".0/24")
	server1      = clusterName + "-server1"
	client       = clusterName + "-client"
	servers      = []string{server1, clusterName + "-server2", clusterName + "-server3"}
	workers      = []string{clusterName + "-worker1", clusterName + "-worker2", clusterName + "-worker3"}
)

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// nodeAddr is the fixed address nodes.sh gives NODE.
func nodeAddr(node string) string {
	switch {
	case node == client:
		return subnetPrefix + ".10"
	case strings.HasPrefix(node, clusterName+"-server"):
		n, _ := strconv.Atoi(strings.TrimPrefix(node, clusterName+"-server"))
		return fmt.Sprintf("%s.%d", subnetPrefix, 10+n)
	default:
		n, _ := strconv.Atoi(strings.TrimPrefix(node, clusterName+"-worker"))
		return fmt.Sprintf("%s.%d", subnetPrefix, 20+n)
	}
}

// dockerOut runs the project's docker CLI and returns its trimmed output.
// requireNoNodes is the start of a test that brings its own cluster up
// and down: a running node of NODES_NAME is someone's cluster (a sweep, a
// second test) and stops the test; nodes that exist but none running are
// what an earlier run left when its machine stopped under it (a CI
// machine made from a disk image taken mid-run held six), removed here
// before up, which would refuse them.
func requireNoNodes(t *testing.T) {
	t.Helper()
	if running := dockerOut(t, "ps", "-q", "--filter", "label=orchbench.nodes="+clusterName); running != "" {
		t.Fatalf("nodes of %s run before the test (NODES_NAME=%s just nodes-down first, or another NODES_NAME and NODES_SUBNET): %s",
			clusterName, clusterName, strings.Join(strings.Fields(running), " "))
	}
	left := dockerOut(t, "ps", "-aq", "--filter", "label=orchbench.nodes="+clusterName)
	if left == "" {
		return
	}
	if r := runScript(t, nil, "nodes.sh", "down"); r.err != nil {
		t.Fatalf("nodes of %s left stopped by an earlier run (%s); nodes.sh down: %v\n%s%s", clusterName, strings.Join(strings.Fields(left), " "), r.err, r.stdout, r.stderr)
	}
	t.Logf("removed %d stopped nodes of %s left by an earlier run", len(strings.Fields(left)), clusterName)
}

func dockerOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := dockerTry(args...)
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func dockerTry(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// api GETs PATH from the agent on NODE (port 4646 Nomad, 8500 Consul),
// from inside NODE, into V.
func api(node string, port int, path string, v any) error {
	out, err := dockerTry("exec", node, "curl", "-sf", "-m", "5", fmt.Sprintf("http://%s:%d%s", nodeAddr(node), port, path))
	if err != nil {
		return fmt.Errorf("%s %s: %v %s", node, path, err, out)
	}
	return json.Unmarshal([]byte(out), v)
}

func mustAPI(t *testing.T, node string, port int, path string, v any) {
	t.Helper()
	if err := api(node, port, path, v); err != nil {
		t.Fatal(err)
	}
}

// Nomad and Consul: three raft peers, the servers' addresses, one leader
// among them, the same one whichever server is asked.
func checkControlPlanes(t *testing.T) {
	for _, cp := range []struct {
		name string
		port int
		raft int
	}{{"nomad", 4646, 4647}, {"consul", 8500, 8300}} {
		var peers []string
		mustAPI(t, server1, cp.port, "/v1/status/peers", &peers)
		want := map[string]bool{}
		for _, s := range servers {
			want[fmt.Sprintf("%s:%d", nodeAddr(s), cp.raft)] = true
		}
		if len(peers) != 3 {
			t.Fatalf("%s: raft peers %v, want the 3 servers", cp.name, peers)
		}
		for _, p := range peers {
			if !want[p] {
				t.Errorf("%s: raft peer %s is not a server node", cp.name, p)
			}
		}
		leaders := map[string]bool{}
		for _, s := range servers {
			var leader string
			mustAPI(t, s, cp.port, "/v1/status/leader", &leader)
			leaders[leader] = true
		}
		if len(leaders) != 1 || leaders[""] {
			t.Fatalf("%s: the servers name leaders %v, want one", cp.name, leaders)
		}
		for l := range leaders {
			if !want[l] {
				t.Errorf("%s: leader %s is not a server node", cp.name, l)
			}
			t.Logf("%s: 3 raft peers, leader %s", cp.name, l)
		}
	}
}

type nomadNode struct {
	ID, Name, Status, NodeClass string
}

// Clients ready on the three workers (class worker) and the client node
// (class client); no server node runs one.
func checkNomadClients(t *testing.T) {
	var nodes []nomadNode
	mustAPI(t, server1, 4646, "/v1/nodes", &nodes)
	got := map[string]string{}
	for _, n := range nodes {
		if n.Status != "ready" {
			t.Errorf("nomad client %s is %s", n.Name, n.Status)
		}
		got[n.Name] = n.NodeClass
	}
	want := map[string]string{client: "client"}
	for _, w := range workers {
		want[w] = "worker"
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("nomad clients (name: class) %v, want %v", got, want)
	}
}

type swarmNode struct {
	Hostname, ManagerStatus, Availability, Status string
}

// Swarm: the servers are drained managers with one leader, the workers and
// the client active workers.
func checkSwarm(t *testing.T) {
	out := dockerOut(t, "exec", server1, "docker", "node", "ls", "--format", "{{json .}}")
	leaders, managers, active := 0, 0, 0
	for _, line := range strings.Split(out, "\n") {
		var n swarmNode
		if err := json.Unmarshal([]byte(line), &n); err != nil {
			t.Fatalf("docker node ls: %v in %q", err, line)
		}
		if n.Status != "Ready" {
			t.Errorf("swarm node %s is %s", n.Hostname, n.Status)
		}
		switch {
		case strings.HasPrefix(n.Hostname, clusterName+"-server"):
			managers++
			if n.ManagerStatus == "Leader" {
				leaders++
			}
			if n.Availability != "Drain" {
				t.Errorf("swarm manager %s is %s, want Drain (servers run no task)", n.Hostname, n.Availability)
			}
		case n.ManagerStatus != "":
			t.Errorf("%s is a swarm manager", n.Hostname)
		case n.Availability == "Active":
			active++
		}
	}
	if managers != 3 || leaders != 1 || active != 4 {
		t.Fatalf("swarm: %d managers, %d leaders, %d active workers; want 3, 1, 4:\n%s", managers, leaders, active, out)
	}
}
