package swarm

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testutil"
)

// listenOn listens on ip at port ("0": any) and accepts until the test
// ends, failing the test when it cannot listen.
func listenOn(t *testing.T, ip, port string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, port))
	if err != nil {
		t.Fatalf("listen on %s: %v", ip, err)
	}
	testutil.Hold(t, l, nil)
	return l
}

// dialedTo dials the primary through m and returns the address reached.
func dialedTo(t *testing.T, m *managerDialer) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := m.DialContext(ctx, "tcp", m.primary)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.RemoteAddr().String(), nil
}

// The manager DOCKER_HOST names is down: the client reaches another of
// the swarm's managers on the same port, stays with it while it answers,
// and goes back to the first when that one answers and the other is gone.
func TestManagerDialerFailsOverToAnotherManager(t *testing.T) {
	other := listenOn(t, "127.0.0.3", "0")
	_, port, _ := net.SplitHostPort(other.Addr().String())
	m := newManagerDialer("tcp://127.0.0.2:" + port)
	if m == nil {
		t.Fatal("no failover for a manager reached over TCP")
	}
	if _, err := dialedTo(t, m); err == nil || !strings.Contains(err.Error(), "no swarm manager answers") {
		t.Fatalf("with no other manager known and the first down: %v", err)
	}
	if m.canFailOver() {
		t.Error("can fail over before any other manager is known")
	}
	// as the node list gives them: the swarm port, the primary among them
	m.noteManagers([]string{"127.0.0.2:2377", "127.0.0.3:2377", "not-an-ip:2377"})
	if !m.canFailOver() {
		t.Fatal("cannot fail over with another manager known")
	}
	if got, err := dialedTo(t, m); err != nil || got != other.Addr().String() {
		t.Fatalf("reached %q (%v), want the other manager %s", got, err, other.Addr())
	}
	primary := listenOn(t, "127.0.0.2", port)
	if got, err := dialedTo(t, m); err != nil || got != other.Addr().String() {
		t.Errorf("left the manager that answers for %q (%v)", got, err)
	}
	other.Close()
	if got, err := dialedTo(t, m); err != nil || got != primary.Addr().String() {
		t.Errorf("reached %q (%v), want the first manager back at %s", got, err, primary.Addr())
	}
}

// A local socket is this machine's engine: nothing to fail over to, and a
// fault on the manager's node takes the harness's API (APIEndpoint).
func TestManagerFailoverOnlyOverTCP(t *testing.T) {
	for _, host := range []string{"unix:///var/run/docker.sock", "npipe:////./pipe/docker_engine", "tcp://10.0.0.1"} {
		if m := newManagerDialer(host); m != nil {
			t.Errorf("%s: a failover dialer", host)
		}
	}
	var none *managerDialer
	none.noteManagers([]string{"10.0.0.2:2377"})
	if none.canFailOver() {
		t.Error("no dialer fails over")
	}
	e, err := NewEngine("tcp://10.83.0.11:2375")
	if err != nil {
		t.Fatal(err)
	}
	o := &Orchestrator{Engine: e}
	if setting, v := o.APIEndpoint(); setting != "DOCKER_HOST" || v != "tcp://10.83.0.11:2375" {
		t.Errorf("one manager known: %q %q", setting, v)
	}
	e.managers.noteManagers([]string{"10.83.0.11:2377", "10.83.0.12:2377"})
	if setting, v := o.APIEndpoint(); setting != "" || v != "" {
		t.Errorf("another manager known, still names %q %q", setting, v)
	}
}
