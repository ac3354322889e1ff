package sweep

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
)

// probedNode serves this machine as node name behind a real HTTP probe and
// counts the questions it answers, so a test can tell that a read went
// through the node's probe and not straight to this machine's kernel.
func probedNode(t *testing.T, name string) (addr string, asked *atomic.Int64) {
	t.Helper()
	asked = new(atomic.Int64)
	probe := nodeprobe.NewServer(nodeprobe.Local{NodeName: name})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		probe.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, asked
}

// The CPU sampler reads each task on its own node: a task on n2 through
// n2's probe, a task on a node without a probe not at all (not from this
// machine instead).
func TestCPUSamplerReadsEachTaskOnItsNode(t *testing.T) {
	e, err := limits.ForPID(os.Getpid())
	if err != nil {
		testenv.Missing(t, "no readable cgroup: %v", err)
	}
	addr, asked := probedNode(t, "n2")
	nodes := nodeprobe.Probes(map[string]string{"n2": addr}, time.Second)
	task := func(node string) orchestrator.Limits {
		return orchestrator.Limits{Instance: orchestrator.Instance{Task: "on-" + node, Node: node, Declared: contract.Task{Cores: 4}}, EffectiveCores: 4, CgroupPath: e.CgroupPath}
	}
	s := startCPUSampler([]orchestrator.Limits{task("n2"), task("n9")}, 50*time.Millisecond, nodes)
	from := time.Now()
	for time.Since(from) < 400*time.Millisecond {
	}
	cpu := s.finish(from, time.Now())
	if len(cpu) != 1 || cpu[0].Task != "on-n2" || cpu[0].Cores < 0.3 {
		t.Fatalf("task CPU %+v; want the n2 task's alone, about a core", cpu)
	}
	if asked.Load() < 4 {
		t.Fatalf("n2's probe answered %d reads in 400 ms of sampling every 50 ms", asked.Load())
	}
}

// The load-path check asks the node an address was registered on which
// process accepts there, and that process's cgroup.
func TestLoadPathGateAsksTheEndpointsNode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Hold(t, ln, nil)
	port := ln.Addr().(*net.TCPAddr).Port
	addr, asked := probedNode(t, "n2")
	nodes := nodeprobe.Probes(map[string]string{"n2": addr}, time.Second)
	eps := []orchestrator.Endpoint{{Service: "taewa", Node: "n2", Address: "127.0.0.1", Port: port}}
	peers := []loadgen.Peer{{Addr: ln.Addr().String(), Connections: 16}}
	own, err := limits.CPUCgroupOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	g := loadPathGate(context.Background(), peers, eps, map[string]bool{"/docker/0123abcd": true}, nodes, nil)
	if g.Passed || !strings.Contains(g.Detail, fmt.Sprintf("(pid %d,", os.Getpid())) {
		t.Fatalf("the relay on n2 passed: %+v", g)
	}
	if asked.Load() != 2 { // the acceptor, then its cgroup
		t.Fatalf("n2's probe answered %d questions; want the acceptor and its cgroup", asked.Load())
	}
	if g := loadPathGate(context.Background(), peers, eps, map[string]bool{own: true}, nodes, nil); !g.Passed {
		t.Fatalf("the instance accepting on n2 was refused: %+v", g)
	}
	// registered on a node without a probe: the check fails, naming it
	eps[0].Node = "n9"
	if g := loadPathGate(context.Background(), peers, eps, map[string]bool{own: true}, nodes, nil); g.Passed || !strings.Contains(g.Detail, "node n9") {
		t.Fatalf("an address on a node that cannot be read passed: %+v", g)
	}
	// the same node killed by the step's own fault: unseen, said so, not failed
	var away awayNodes
	away.mark("n9")
	if g := loadPathGate(context.Background(), peers, eps, map[string]bool{own: true}, nodes, &away); !g.Passed || !strings.Contains(g.Detail, "on node n9, which the step's fault took away") {
		t.Fatalf("an address on the node the fault took away: %+v", g)
	}
}

// Agent processes are looked for on every node of the step, each named.
func TestAgentProcessesOnEveryNode(t *testing.T) {
	old := limits.ProcRoot
	t.Cleanup(func() { limits.ProcRoot = old })
	limits.ProcRoot = t.TempDir()
	dir := filepath.Join(limits.ProcRoot, "102")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/bin/vector", filepath.Join(dir, "exe")); err != nil {
		t.Fatal(err)
	}
	a1, _ := probedNode(t, "n1")
	a2, _ := probedNode(t, "n2")
	nodes := nodeprobe.Probes(map[string]string{"n1": a1, "n2": a2}, time.Second)
	lims := []orchestrator.Limits{{Instance: orchestrator.Instance{Node: "n2"}}, {Instance: orchestrator.Instance{Node: "n1"}}, {Instance: orchestrator.Instance{Node: "n2"}}}
	watched := watchedNodes(nodes, lims)
	got, err := agentProcesses(context.Background(), watched, nil)
	if want := "vector (pid 102) on node n1, vector (pid 102) on node n2"; err != nil || strings.Join(got, ", ") != want {
		t.Fatalf("agents %q, %v; want %q", got, err, want)
	}
	withN9 := watchedNodes(nodes, lims, []orchestrator.Limits{{Instance: orchestrator.Instance{Node: "n9"}}})
	if _, err := agentProcesses(context.Background(), withN9, nil); err == nil || !strings.Contains(err.Error(), "node n9") {
		t.Fatalf("a node that cannot be read: %v", err)
	}
	// the node the step's own fault took away is passed over; another is not
	var away awayNodes
	away.mark("n9")
	if got, err := agentProcesses(context.Background(), withN9, &away); err != nil || len(got) != 2 {
		t.Fatalf("with n9 killed by the step's fault: %q, %v", got, err)
	}
	away.reset()
	away.mark("n7")
	if _, err := agentProcesses(context.Background(), withN9, &away); err == nil {
		t.Fatal("n9 unreadable while the fault took n7 away: passed")
	}
}

// On the embedded cluster the orchestrators name this one machine
// differently (Nomad's node name, Docker's hostname): its agents are
// listed once, as before there were nodes.
func TestAgentProcessesOnThisMachineUnderTwoNames(t *testing.T) {
	old := limits.ProcRoot
	t.Cleanup(func() { limits.ProcRoot = old })
	limits.ProcRoot = t.TempDir()
	dir := filepath.Join(limits.ProcRoot, "102")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/bin/vector", filepath.Join(dir, "exe")); err != nil {
		t.Fatal(err)
	}
	steps := []orchestrator.Limits{{Instance: orchestrator.Instance{Node: "debian"}}}
	agent := []orchestrator.Limits{{Instance: orchestrator.Instance{Node: "orchbench-node"}}}
	got, err := agentProcesses(context.Background(), watchedNodes(nil, steps, agent), nil)
	if err != nil || strings.Join(got, ", ") != "vector (pid 102)" {
		t.Fatalf("agents %q, %v; want the one vector, once", got, err)
	}
}

// An address off loopback (a node's own, on a cluster of many hosts) is
// looked at by its node's probe, which reaches it; without probes it is
// in a namespace this machine cannot see into, and passes unlooked.
func TestLoadPathGateLooksOffLoopbackThroughTheProbe(t *testing.T) {
	ip := nonLoopbackIP(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.Hold(t, ln, nil)
	port := ln.Addr().(*net.TCPAddr).Port
	addr, asked := probedNode(t, "n2")
	nodes := nodeprobe.Probes(map[string]string{"n2": addr}, time.Second)
	eps := []orchestrator.Endpoint{{Service: "taewa", Node: "n2", Address: ip, Port: port}}
	peers := []loadgen.Peer{{Addr: ln.Addr().String(), Connections: 4}}
	elsewhere := map[string]bool{"/docker/0123abcd": true}
	if g := loadPathGate(context.Background(), peers, eps, elsewhere, nodes, nil); g.Passed || !strings.Contains(g.Detail, fmt.Sprintf("(pid %d,", os.Getpid())) {
		t.Fatalf("a relay at %s on n2 passed: %+v", ln.Addr(), g)
	}
	if asked.Load() == 0 {
		t.Fatal("n2's probe was not asked about an address off loopback")
	}
	if g := loadPathGate(context.Background(), peers, eps, elsewhere, nil, nil); !g.Passed {
		t.Fatalf("without probes an address off loopback is not looked at, so it passes: %+v", g)
	}
}

// nonLoopbackIP is an IPv4 address of this machine off loopback.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no IPv4 address off loopback")
	return ""
}
