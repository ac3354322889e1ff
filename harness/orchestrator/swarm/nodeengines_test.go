package swarm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
)

func TestNodeEngineHost(t *testing.T) {
	for _, c := range []struct{ manager, addr, want, err string }{
		{"tcp://10.81.0.11:2375", "10.81.0.21", "tcp://10.81.0.21:2375", ""},
		{"tcp://manager.example:4243", "10.0.0.5", "tcp://10.0.0.5:4243", ""},
		{"https://10.0.0.1", "10.0.0.7", "https://10.0.0.7:2376", ""},
		{"tcp://10.0.0.1", "10.0.0.7", "tcp://10.0.0.7:2375", ""},
		{"tcp://[fd00::1]:2375", "fd00::7", "tcp://[fd00::7]:2375", ""},
		{"unix:///var/run/docker.sock", "10.0.0.7", "", "set DOCKER_HOST=tcp://"},
		{"tcp://10.0.0.1:2375", "", "", "no address"},
		{"tcp://10.0.0.1:2375", "worker1", "", "no address"},
	} {
		got, err := NodeEngineHost(c.manager, c.addr)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("NodeEngineHost(%q, %q) = %q, %v; want an error with %q", c.manager, c.addr, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NodeEngineHost(%q, %q) = %q, %v; want %q", c.manager, c.addr, got, err, c.want)
		}
	}
}

// fakeEngine answers the few Engine API calls the resolver makes: the
// manager's info and node list, and every engine's ping.
type fakeEngine struct {
	self      string
	kernel    string
	nodes     []swarm.Node
	nodeLists atomic.Int32
	pings     atomic.Int32
	// published is the host port each container publishes for 8000/tcp
	published map[string]string
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Api-Version", "1.47")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/_ping"):
		f.pings.Add(1)
		_, _ = w.Write([]byte("OK"))
	case strings.HasSuffix(r.URL.Path, "/info"):
		_ = json.NewEncoder(w).Encode(map[string]any{"KernelVersion": f.kernel, "CgroupVersion": "1", "CgroupDriver": "cgroupfs",
			"Swarm": map[string]any{"NodeID": f.self, "LocalNodeState": "active", "ControlAvailable": true}})
	case strings.Contains(r.URL.Path, "/containers/") && strings.HasSuffix(r.URL.Path, "/json"):
		id := strings.TrimSuffix(r.URL.Path[strings.Index(r.URL.Path, "/containers/")+len("/containers/"):], "/json")
		port, ok := f.published[id]
		if !ok {
			http.Error(w, `{"message":"No such container: `+id+`"}`, http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Id": id, "NetworkSettings": map[string]any{
			"Ports": map[string]any{"8000/tcp": []map[string]string{{"HostIp": "0.0.0.0", "HostPort": port}}}}})
	case strings.HasSuffix(r.URL.Path, "/nodes"):
		f.nodeLists.Add(1)
		_ = json.NewEncoder(w).Encode(f.nodes)
	default:
		http.Error(w, `{"message":"not faked"}`, http.StatusNotFound)
	}
}

func node(id, name, addr string, state swarm.NodeState) swarm.Node {
	n := swarm.Node{ID: id}
	n.Description.Hostname = name
	n.Status = swarm.NodeStatus{State: state, Addr: addr}
	return n
}

// engines is a resolver whose manager is a fake at tcp://127.0.0.1:PORT and
// whose dial answers each node address from workers (a missing one is a
// server that is closed); dialled records the hosts asked for.
func engines(t *testing.T, manager *fakeEngine, workers map[string]*fakeEngine) (*NodeEngines, *[]string, string) {
	t.Helper()
	srv := httptest.NewServer(manager)
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	mc, err := client.New(client.WithHost("tcp://127.0.0.1:" + port))
	if err != nil {
		t.Fatal(err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	var dialled []string
	n := NewNodeEngines(mc)
	n.dial = func(host string) (*client.Client, error) {
		dialled = append(dialled, host)
		target := "tcp://" + strings.TrimPrefix(closed.URL, "http://")
		for addr, f := range workers {
			if strings.Contains(host, "//"+addr+":") {
				s := httptest.NewServer(f)
				t.Cleanup(s.Close)
				target = "tcp://" + strings.TrimPrefix(s.URL, "http://")
			}
		}
		return client.New(client.WithHost(target))
	}
	t.Cleanup(n.Close)
	return n, &dialled, port
}

func TestNodeEnginesResolve(t *testing.T) {
	ctx := context.Background()
	manager := &fakeEngine{self: "m1", nodes: []swarm.Node{
		node("m1", "sw-server1", "10.81.0.11", swarm.NodeStateReady),
		node("w2", "sw-worker2", "10.81.0.22", swarm.NodeStateReady),
		node("w1", "sw-worker1", "10.81.0.21", swarm.NodeStateReady),
		node("w3", "sw-worker3", "10.81.0.23", swarm.NodeStateDown),
	}}
	w1, w2 := &fakeEngine{}, &fakeEngine{}
	n, dialled, port := engines(t, manager, map[string]*fakeEngine{"10.81.0.21": w1, "10.81.0.22": w2})

	self, err := n.For(ctx, "m1")
	if err != nil || self.Client != n.Manager() || self.Name != "sw-server1" {
		t.Fatalf("the manager's own node: %+v, %v; want the manager's client", self, err)
	}
	e, err := n.For(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	want := "tcp://10.81.0.21:" + port
	if e.Name != "sw-worker1" || e.Host != want || e.Client == n.Manager() {
		t.Errorf("worker1's engine: %s at %s; want sw-worker1 at %s with its own client", e.Name, e.Host, want)
	}
	if w1.pings.Load() == 0 {
		t.Error("worker1's engine was not pinged before use")
	}
	lists := manager.nodeLists.Load()
	if again, err := n.For(ctx, "w1"); err != nil || again != e || manager.nodeLists.Load() != lists {
		t.Errorf("a second For(w1): %+v, %v, %d node lists; want the cached engine without listing again", again, err, manager.nodeLists.Load()-lists)
	}
	all, err := n.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range all {
		names = append(names, e.Name)
	}
	if strings.Join(names, " ") != "sw-server1 sw-worker1 sw-worker2" {
		t.Errorf("All: %v; want the ready nodes by name (worker3 is down)", names)
	}
	if len(*dialled) != 2 {
		t.Errorf("dialled %v; want worker1 and worker2 once each", *dialled)
	}
	if _, err := n.For(ctx, "gone"); err == nil || !strings.Contains(err.Error(), "not in the swarm's node list") {
		t.Errorf("For an unknown node: %v", err)
	}
	if _, err := n.For(ctx, ""); err == nil {
		t.Error("For a task without a node: no error")
	}
}

// A node whose engine does not answer is named with its address, by For
// and by All (which must not skip it: its containers would be missed).
func TestNodeEnginesUnreachable(t *testing.T) {
	ctx := context.Background()
	manager := &fakeEngine{self: "m1", nodes: []swarm.Node{
		node("m1", "sw-server1", "10.81.0.11", swarm.NodeStateReady),
		node("w1", "sw-worker1", "10.81.0.21", swarm.NodeStateReady),
		node("w2", "sw-worker2", "10.81.0.22", swarm.NodeStateReady),
	}}
	n, _, port := engines(t, manager, map[string]*fakeEngine{"10.81.0.21": {}})
	want := []string{"sw-worker2", "tcp://10.81.0.22:" + port, "does not answer"}
	_, err := n.For(ctx, "w2")
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("For(worker2) with its engine down: %v; want %q in it", err, w)
		}
	}
	if _, err := n.All(ctx); err == nil || !strings.Contains(err.Error(), want[1]) {
		t.Errorf("All with worker2's engine down: %v; want it named", err)
	}
	if e, err := n.For(ctx, "w1"); err != nil || e.Name != "sw-worker1" {
		t.Errorf("worker1, which answers: %+v, %v", e, err)
	}
}

// Behind a local socket the manager says nothing of the other nodes'
// engines: a task elsewhere is an error that says what to set.
func TestNodeEnginesLocalManager(t *testing.T) {
	mc, err := client.New(client.WithHost("unix:///nonexistent/docker.sock"))
	if err != nil {
		t.Fatal(err)
	}
	n := NewNodeEngines(mc)
	n.self = "m1"
	_, err = n.resolve(context.Background(), node("w1", "sw-worker1", "10.81.0.21", swarm.NodeStateReady))
	if err == nil || !strings.Contains(err.Error(), "sw-worker1") || !strings.Contains(err.Error(), "DOCKER_HOST=tcp://") {
		t.Errorf("a worker's engine behind a socket manager: %v; want the node named and DOCKER_HOST advised", err)
	}
	e, err := n.resolve(context.Background(), node("m1", "host", "127.0.0.1", swarm.NodeStateReady))
	if err != nil || e.Client != mc {
		t.Errorf("the single node of a local swarm: %+v, %v; want the manager's client", e, err)
	}
}

// Facts carry each node's kernel from its own engine, the manager's from
// the manager, and an unreachable worker fails them naming it.
func TestFactsFromEveryEngine(t *testing.T) {
	ctx := context.Background()
	manager := &fakeEngine{self: "m1", kernel: "6.1-manager", nodes: []swarm.Node{
		node("m1", "sw-server1", "10.81.0.11", swarm.NodeStateReady),
		node("w1", "sw-worker1", "10.81.0.21", swarm.NodeStateReady),
	}}
	n, _, _ := engines(t, manager, map[string]*fakeEngine{"10.81.0.21": {kernel: "6.1-worker1"}})
	a := &Engine{Client: n.Manager(), Engines: n}
	facts, err := a.Facts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k := facts["sw-worker1"]["kernel.version"]; k != "6.1-worker1" {
		t.Errorf("worker1's kernel.version %q; want its own engine's 6.1-worker1", k)
	}
	if k := facts["sw-server1"]["kernel.version"]; k != "6.1-manager" {
		t.Errorf("the manager's kernel.version %q; want 6.1-manager", k)
	}
	if d := facts["sw-worker1"]["cgroup.driver"]; d != "cgroupfs" {
		t.Errorf("worker1's cgroup.driver %q", d)
	}

	down, _, port := engines(t, manager, nil)
	_, err = (&Engine{Client: down.Manager(), Engines: down}).Facts(ctx)
	if err == nil || !strings.Contains(err.Error(), "sw-worker1") || !strings.Contains(err.Error(), "10.81.0.21:"+port) {
		t.Errorf("Facts with worker1's engine down: %v; want it named with its address", err)
	}
}

// After a manager's election, a task's record can lack its port status
// while its container still publishes the port: the port is read from the
// container on its node's engine, and a container publishing none is an
// error naming the node.
func TestContainerHostPortAskedOfTheTasksNode(t *testing.T) {
	manager := &fakeEngine{self: "m1", nodes: []swarm.Node{
		node("m1", "sw-server1", "10.81.0.11", swarm.NodeStateReady),
		node("w1", "sw-worker1", "10.81.0.21", swarm.NodeStateReady),
	}}
	w1 := &fakeEngine{published: map[string]string{"c-front": "32775"}}
	n, _, _ := engines(t, manager, map[string]*fakeEngine{"10.81.0.21": w1})
	a := &Engine{Client: n.Manager(), Engines: n}
	task := func(container string) swarm.Task {
		return swarm.Task{ID: "t1", NodeID: "w1", Status: swarm.TaskStatus{State: swarm.TaskStateRunning, ContainerStatus: &swarm.ContainerStatus{ContainerID: container}}}
	}
	if got, err := a.containerHostPort(context.Background(), task("c-front"), 8000); err != nil || got != 32775 {
		t.Errorf("the front end's container: port %d, %v; want 32775", got, err)
	}
	w1.published["c-none"] = ""
	if _, err := a.containerHostPort(context.Background(), task("c-none"), 8000); err == nil || !strings.Contains(err.Error(), "on node sw-worker1 publishes none") {
		t.Errorf("a container publishing nothing: %v", err)
	}
}
