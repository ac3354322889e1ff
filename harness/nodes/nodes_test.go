package nodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeDocker answers the docker CLI calls Emulated makes from a table of
// nodes, and records every call.
type fakeDocker struct {
	lines []string // docker inspect output, one node a line
	calls []string
	// fail makes calls starting with the prefix fail with the message
	fail map[string]string
	// out answers calls starting with the prefix
	out map[string]string
}

func (f *fakeDocker) run(_ context.Context, args ...string) (string, error) {
	call := strings.Join(args, " ")
	f.calls = append(f.calls, call)
	for p, msg := range f.fail {
		if strings.HasPrefix(call, p) {
			return msg, errors.New(msg)
		}
	}
	switch {
	case strings.HasPrefix(call, "ps -aq"):
		if len(f.lines) == 0 {
			return "", nil
		}
		return "id1 id2", nil
	case strings.HasPrefix(call, "inspect"):
		return strings.Join(f.lines, "\n"), nil
	}
	for p, o := range f.out {
		if strings.HasPrefix(call, p) {
			return o, nil
		}
	}
	return "", nil
}

func emulated(f *fakeDocker, http map[string]string) *Emulated {
	return &Emulated{Name: "fl", Docker: f.run, HTTPGet: func(_ context.Context, url string) ([]byte, error) {
		if b, ok := http[url]; ok {
			return []byte(b), nil
		}
		return nil, fmt.Errorf("GET %s: connection refused", url)
	}}
}

var threeOne = []string{
	"/fl-client|client|true|10.79.0.10",
	"/fl-worker2|worker|true|10.79.0.22",
	"/fl-server1|server|true|10.79.0.11",
	"/fl-worker1|worker|false|10.79.0.21",
}

func TestNodesListServersFirstWithTheirFixedAddress(t *testing.T) {
	e := emulated(&fakeDocker{lines: threeOne}, nil)
	all, err := e.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range all {
		got = append(got, fmt.Sprintf("%s/%s/%s/%v", n.Name, n.Role, n.Address, n.Running))
	}
	want := "fl-server1/server/10.79.0.11/true fl-worker1/worker/10.79.0.21/false fl-worker2/worker/10.79.0.22/true fl-client/client/10.79.0.10/true"
	if strings.Join(got, " ") != want {
		t.Errorf("nodes %v\nwant %s", got, want)
	}
	if n, ok := ByAddress(all, "10.79.0.11:4647"); !ok || n.Name != "fl-server1" {
		t.Errorf("ByAddress of a raft address: %+v", n)
	}
	if n := all[0]; n.NameIn("nomad") != "fl-server1" {
		t.Errorf("a node's name in Nomad defaults to its own: %s", n.NameIn("nomad"))
	}
}

func TestNodesRefuseWhatIsNotACluster(t *testing.T) {
	if _, err := emulated(&fakeDocker{}, nil).Nodes(context.Background()); err == nil || !strings.Contains(err.Error(), "NODES_NAME=fl just nodes-up") {
		t.Errorf("no nodes: %v", err)
	}
	bad := &fakeDocker{lines: []string{"/fl-x|manager|true|10.79.0.5"}}
	if _, err := emulated(bad, nil).Nodes(context.Background()); err == nil || !strings.Contains(err.Error(), `orchbench.node.role="manager"`) {
		t.Errorf("an unknown role: %v", err)
	}
	if _, err := NewEmulated("Fl-1"); err == nil || !strings.Contains(err.Error(), "NODES_NAME=Fl-1") {
		t.Errorf("a bad cluster name: %v", err)
	}
}

// Nothing but this cluster's own running nodes is ever acted on.
func TestFaultsActOnlyOnThisClustersNodes(t *testing.T) {
	ctx := context.Background()
	f := &fakeDocker{lines: threeOne}
	e := emulated(f, nil)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"kill a stranger", e.Kill(ctx, "obn-worker1"), `has no node "obn-worker1" (its nodes: fl-server1, fl-worker1, fl-worker2, fl-client)`},
		{"kill a dead node", e.Kill(ctx, "fl-worker1"), "already down"},
		{"revive a running node", e.Revive(ctx, "fl-worker2"), "it is running"},
		{"restart on a dead node", e.RestartAgent(ctx, "fl-worker1", AgentConsul), "the node is down"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
	if _, err := e.Partition(ctx, "fl-worker2", 0); err == nil || !strings.Contains(err.Error(), "a duration above 0") {
		t.Errorf("a partition of 0 s: %v", err)
	}
	for _, call := range f.calls {
		if strings.HasPrefix(call, "kill") || strings.HasPrefix(call, "start") || strings.HasPrefix(call, "exec") {
			t.Errorf("acted although refused: docker %s", call)
		}
	}
	if err := e.Kill(ctx, "fl-worker2"); err != nil || f.calls[len(f.calls)-1] != "kill fl-worker2" {
		t.Errorf("kill: %v, last call %q", err, f.calls[len(f.calls)-1])
	}
}

// Revive starts the node, clears the dead runtime's pid files, and starts
// the agents it has scripts for, the runtime first and waited for.
func TestReviveRunsTheNodesStartScriptsInOrder(t *testing.T) {
	f := &fakeDocker{lines: threeOne, out: map[string]string{"exec fl-worker1 ls /etc/obn/run": "consul.sh\ndockerd.sh\nnomad.sh"}}
	if err := emulated(f, nil).Revive(context.Background(), "fl-worker1"); err != nil {
		t.Fatal(err)
	}
	var acts []string
	for _, c := range f.calls {
		if !strings.HasPrefix(c, "ps") && !strings.HasPrefix(c, "inspect") {
			acts = append(acts, c)
		}
	}
	want := []string{
		"start fl-worker1",
		"exec fl-worker1 rm -f /var/run/docker.pid /var/run/docker/containerd/containerd.pid",
		"exec fl-worker1 ls /etc/obn/run",
		"exec -d fl-worker1 sh /etc/obn/run/dockerd.sh",
		"exec fl-worker1 docker info",
		"exec -d fl-worker1 sh /etc/obn/run/consul.sh",
		"exec -d fl-worker1 sh /etc/obn/run/nomad.sh",
	}
	if strings.Join(acts, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(acts, "\n"), strings.Join(want, "\n"))
	}
}

func TestRestartAgentStopsThenStartsDetached(t *testing.T) {
	f := &fakeDocker{lines: threeOne}
	if err := emulated(f, nil).RestartAgent(context.Background(), "fl-worker2", AgentConsul); err != nil {
		t.Fatal(err)
	}
	n := len(f.calls)
	if !strings.HasPrefix(f.calls[n-2], "exec fl-worker2 sh -c") || !strings.HasSuffix(f.calls[n-2], "stop consul") || f.calls[n-1] != "exec -d fl-worker2 sh /etc/obn/run/consul.sh" {
		t.Errorf("calls %q", f.calls[n-2:])
	}
	// an agent the node does not run: the stop script's refusal is passed on
	f = &fakeDocker{lines: threeOne, fail: map[string]string{"exec fl-worker2 sh -c": "agent kubelet does not run on this node (no /etc/obn/run/kubelet.sh)"}}
	err := emulated(f, nil).RestartAgent(context.Background(), "fl-worker2", AgentKubelet)
	if err == nil || !strings.Contains(err.Error(), "restart kubelet on node fl-worker2: stop:") || !strings.Contains(err.Error(), "does not run on this node") {
		t.Errorf("%v", err)
	}
	if _, err := ParseAgent("vault"); err == nil || !strings.Contains(err.Error(), "known: consul, nomad, kubelet") {
		t.Errorf("%v", err)
	}
}

func TestLeaderAsksTheServersInTurn(t *testing.T) {
	ctx := context.Background()
	three := []string{
		"/fl-server1|server|false|10.79.0.11", "/fl-server2|server|true|10.79.0.12", "/fl-server3|server|true|10.79.0.13",
		"/fl-worker1|worker|true|10.79.0.21",
	}
	// server2 does not answer, server3 names server2 as Nomad's leader
	http := map[string]string{
		"http://10.79.0.13:4646/v1/status/leader": `"10.79.0.12:4647"`,
		"http://10.79.0.13:8500/v1/status/leader": `""`,
	}
	e := emulated(&fakeDocker{lines: three, out: map[string]string{
		"exec fl-server2 docker node ls": "fl-server1 Unreachable\nfl-server2 Reachable\nfl-server3 Leader",
	}}, http)
	n, err := e.Leader(ctx, PlaneNomad)
	if err != nil || n.Name != "fl-server2" {
		t.Errorf("nomad leader %+v, %v", n, err)
	}
	if _, err := e.Leader(ctx, PlaneConsul); !errors.Is(err, ErrNoLeader) {
		t.Errorf("consul without a leader: %v", err)
	}
	if n, err := e.Leader(ctx, PlaneSwarm); err != nil || n.Name != "fl-server3" {
		t.Errorf("swarm leader %+v, %v", n, err)
	}
	// no server answers at all
	e = emulated(&fakeDocker{lines: three}, nil)
	if _, err := e.Leader(ctx, PlaneNomad); !errors.Is(err, ErrNoLeader) || !strings.Contains(err.Error(), "fl-server2: GET") {
		t.Errorf("no answer: %v", err)
	}
	if _, err := e.Leader(ctx, "vault"); err == nil || !strings.Contains(err.Error(), "not a control plane") || !strings.Contains(err.Error(), "etcd, kube-controller-manager") {
		t.Errorf("vault: %v", err)
	}
}

func TestSingleNodeRefusesEveryFault(t *testing.T) {
	ctx := context.Background()
	var s SingleNode
	_, perr := s.Partition(ctx, "n", time.Second)
	for _, err := range []error{s.Kill(ctx, "n"), s.Revive(ctx, "n"), perr, s.RestartAgent(ctx, "n", AgentNomad)} {
		if !errors.Is(err, ErrSingleNode) || !strings.Contains(err.Error(), "just nodes-up nodes=4 servers=3") {
			t.Errorf("%v", err)
		}
	}
	t.Setenv("NODES_NAME", "")
	if c, err := FromEnv(); err != nil || c.Describe() != "the embedded single-node cluster" {
		t.Errorf("FromEnv without NODES_NAME: %v, %v", c, err)
	}
	t.Setenv("NODES_NAME", "fl")
	if c, err := FromEnv(); err != nil || c.Describe() != "emulated cluster fl" {
		t.Errorf("FromEnv with NODES_NAME=fl: %v, %v", c, err)
	}
}

// The node containers are on the project's dockerd, never on the engine a
// sweep's DOCKER_HOST names (a Swarm manager inside the cluster).
func TestNodeContainersAreReadFromTheProjectsDockerd(t *testing.T) {
	env := ProjectDockerEnviron([]string{"PATH=/bin", "DOCKER_HOST=tcp://10.77.0.11:2375", "DOCKER_TLS_VERIFY=1", "DOCKER_CERT_PATH=/c", "DOCKER_CONTEXT=x"})
	if strings.Join(env, " ") != "PATH=/bin" {
		t.Errorf("with a sweep's DOCKER_HOST: %v, want the local socket's (no DOCKER_*)", env)
	}
	env = ProjectDockerEnviron([]string{"DOCKER_HOST=tcp://10.77.0.11:2375", ProjectDockerEnv + "=unix:///run/project.sock"})
	if !slices.Contains(env, "DOCKER_HOST=unix:///run/project.sock") || slices.Contains(env, "DOCKER_HOST=tcp://10.77.0.11:2375") {
		t.Errorf("with %s: %v", ProjectDockerEnv, env)
	}
}
