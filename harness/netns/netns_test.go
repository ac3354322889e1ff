package netns

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testutil"
)

// A listener on the loopback of a namespace of its own answers through
// Dial into that namespace and not from the harness's namespace, and a
// command run in it sees that namespace's interfaces only.
func TestDialAndCommandEnterTheNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	name := "orchbench-test-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", name).Run()
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	ns := Named(name)
	var ln net.Listener
	if err := ns.Do(func() error {
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	testutil.Hold(t, ln, func(c net.Conn) {
		c.Write([]byte("inside"))
		c.Close()
	})
	addr := ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := ns.Dial(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dial %s inside %s: %v", addr, name, err)
	}
	buf := make([]byte, 6)
	if _, err := c.Read(buf); err != nil || string(buf) != "inside" {
		t.Fatalf("read %q, %v", buf, err)
	}
	c.Close()
	// the harness's own loopback has no such listener (the port is free or someone else's)
	if c, err := Path("").Dial(ctx, "tcp", addr); err == nil {
		b := make([]byte, 6)
		n, _ := c.Read(b)
		c.Close()
		if string(b[:n]) == "inside" {
			t.Fatalf("the namespace's listener answered on the host's loopback")
		}
	}
	out, err := ns.Command(ctx, "ip", "-o", "link").CombinedOutput()
	if err != nil {
		t.Fatalf("command in namespace: %v %s", err, out)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "lo:") {
		t.Fatalf("the command saw other links than the namespace's lo: %s", out)
	}
}
