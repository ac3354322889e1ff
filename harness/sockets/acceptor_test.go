package sockets

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/testutil"
)

func TestAcceptorOfFindsTheAcceptingProcess(t *testing.T) {
	addr := testutil.ListenAndHold(t, nil)
	a, found, err := AcceptorOf("", addr, 2*time.Second)
	if err != nil || !found || a.PID != os.Getpid() || a.Command == "" {
		t.Fatalf("acceptor %+v, found %v, error %v; want this process (pid %d)", a, found, err, os.Getpid())
	}
}

// A listener that never accepts (as docker's port reservation, which the
// kernel's NAT rule bypasses) is named when the connection waits in its queue.
func TestAcceptorOfSaysWhenNobodyAccepts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, found, err := AcceptorOf("", ln.Addr().String(), 200*time.Millisecond)
	if !found || err == nil {
		t.Fatalf("found %v, error %v; want the unaccepted connection reported", found, err)
	}
}

// Inside another network namespace (the Kubernetes node's), the accepting
// process is found in that namespace's tables, not the harness's.
func TestAcceptorOfInsideANamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	name := "orchbench-acc-" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", name).Run()
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	ns := netns.Named(name)
	var ln net.Listener
	if err := ns.Do(func() error {
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testutil.Hold(t, ln, nil)
	a, found, err := AcceptorOf(ns, ln.Addr().String(), 2*time.Second)
	if err != nil || !found || a.PID != os.Getpid() {
		t.Fatalf("acceptor %+v, found %v, error %v; want this process (pid %d) found inside %s", a, found, err, os.Getpid(), name)
	}
}
