package sweep

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/testutil"
)

// A registered address can itself be a relay: Swarm's host-mode publishing
// answers on loopback through docker-proxy, which holds the port and
// forwards to the task. The sweep asks who accepted the connections, and
// the gate refuses a process of no instance's cgroup as a proxy in the path.
func TestLoadPathGateFindsAUserlandRelay(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Hold(t, ln, nil)
	addr := ln.Addr().(*net.TCPAddr)
	eps := []orchestrator.Endpoint{{Service: "taewa", Address: "127.0.0.1", Port: addr.Port}}
	peers := []loadgen.Peer{{Addr: addr.String(), Connections: 16}}
	instance := map[string]bool{"/docker/0123abcd": true}
	g := loadPathGate(context.Background(), peers, eps, instance, nil, nil)
	if g.Passed || g.NotChecked || g.Breaks || !strings.Contains(g.Detail, fmt.Sprintf("connections to %s are accepted by", addr)) ||
		!strings.Contains(g.Detail, fmt.Sprintf("(pid %d,", os.Getpid())) || !strings.Contains(g.Detail, "a userland proxy relays the load") {
		t.Fatalf("a relay holding the registered port passed: %+v", g)
	}
	// the same listener inside an instance's cgroup is the instance itself (host networking)
	own, err := limits.CPUCgroupOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	instance[own] = true
	if g := loadPathGate(context.Background(), peers, eps, instance, nil, nil); !g.Passed {
		t.Fatalf("an instance listening itself was refused: %+v", g)
	}
}
