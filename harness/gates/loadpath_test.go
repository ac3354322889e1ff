package gates

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

func TestLoadPathGateReadsTheWire(t *testing.T) {
	eps := []orchestrator.Endpoint{{Service: "taewa", Address: "127.0.0.1", Port: 2000}, {Service: "taewa", Address: "127.0.0.1", Port: 2001}}
	direct := []loadgen.Peer{{Addr: "127.0.0.1:2000", Connections: 8}, {Addr: "127.0.0.1:2001", Connections: 8}}
	if g := LoadPathGate(direct, eps, nil, nil); !g.Passed || !strings.Contains(g.Detail, "127.0.0.1:2001 (taewa, 8 connections)") {
		t.Fatalf("direct load refused: %+v", g)
	}
	// the generator was aimed at a registered address, but a forwarder
	// (or a script's own address) is what the sockets reached
	proxied := []loadgen.Peer{{Addr: "127.0.0.1:2000", Connections: 8}, {Addr: "127.0.0.1:39999", Connections: 8}}
	g := LoadPathGate(proxied, eps, nil, nil)
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, "127.0.0.1:39999 (8 connections), which is not a registered instance") {
		t.Fatalf("a proxy in the path passed: %+v", g)
	}
	if g := LoadPathGate(nil, eps, nil, nil); !g.NotChecked || g.Passed {
		t.Fatalf("no connection at all must say not checked: %+v", g)
	}
}

// What accepts at a registered loopback address decides: an instance's
// process or the kernel passes, any other process relays the load, and
// what could not be seen fails rather than passes, except an address
// nothing answers on any more (an instance a fault replaced).
func TestLoadPathGateJudgesWhatAccepts(t *testing.T) {
	eps := []orchestrator.Endpoint{{Service: "taewa", Address: "127.0.0.1", Port: 2000}, {Service: "taewa", Address: "10.244.0.7", Port: 8080}}
	peers := []loadgen.Peer{{Addr: "127.0.0.1:2000", Connections: 8}, {Addr: "10.244.0.7:8080", Connections: 8}}
	instances := map[string]bool{"/docker/0123abcd": true}
	for name, c := range map[string]struct {
		seen   Acceptor
		passed bool
		detail string
	}{
		"the instance itself": {Acceptor{Found: true, PID: 41, Command: "taewa", Cgroup: "/docker/0123abcd"}, true,
			"every connection went straight to an instance: 127.0.0.1:2000 (taewa, 8 connections), 10.244.0.7:8080 (taewa, 8 connections)"},
		"the kernel, into the instance's namespace": {Acceptor{}, true, "every connection went straight to an instance"},
		"a userland proxy": {Acceptor{Found: true, PID: 7, Command: "docker-proxy", Cgroup: "/system.slice/docker.service"}, false,
			"connections to 127.0.0.1:2000 are accepted by docker-proxy (pid 7, cgroup /system.slice/docker.service), a process of no instance: a userland proxy relays the load"},
		"a process whose cgroup is unreadable": {Acceptor{Found: true, PID: 7, Command: "socat", CgroupErr: errors.New("no such process")}, false,
			"connections to 127.0.0.1:2000 are accepted by socat (pid 7), whose cgroup could not be read: no such process"},
		"the acceptor unseen": {Acceptor{Err: errors.New("sock_diag: permission denied")}, false,
			"who accepts the connections to 127.0.0.1:2000 could not be seen: sock_diag: permission denied"},
		"nothing answers after the load": {Acceptor{Unanswered: true}, true,
			"(127.0.0.1:2000 did not answer after the load, so what accepts there was not seen)"},
	} {
		t.Run(name, func(t *testing.T) {
			g := LoadPathGate(peers, eps, map[string]Acceptor{"127.0.0.1:2000": c.seen}, instances)
			if g.Name != LoadPath || g.Passed != c.passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, c.detail) {
				t.Fatalf("gate %+v\nwant passed=%v with %q", g, c.passed, c.detail)
			}
		})
	}
	// an address that is not registered fails whatever accepts there
	stray := append(peers, loadgen.Peer{Addr: "127.0.0.1:39999", Connections: 1})
	if g := LoadPathGate(stray, eps, map[string]Acceptor{"127.0.0.1:2000": {}}, instances); g.Passed || !strings.Contains(g.Detail, "127.0.0.1:39999 (1 connections), which is not a registered instance") {
		t.Fatalf("a stray address passed: %+v", g)
	}
}

func TestOnLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "127.0.0.53:53": true, "10.244.0.7:8080": false, "localhost:80": false, "127.0.0.1": false} {
		if got := OnLoopback(addr); got != want {
			t.Errorf("OnLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
