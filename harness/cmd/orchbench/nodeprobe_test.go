package main

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/nodeprobe"
)

// The command serves this machine under the name it is given until it is
// stopped, and then returns without an error.
func TestNodeProbeServesUntilStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serveNodeProbe(ctx, "127.0.0.1:0", "n7", "", func(a net.Addr) { addrs <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatal(err)
	}
	c := nodeprobe.NewClient("n7", addr.String())
	if name, err := c.Identity(ctx); err != nil || name != "n7" {
		t.Fatalf("identity %q, %v", name, err)
	}
	if cg, err := c.CPUCgroupOf(ctx, os.Getpid()); err != nil || cg == "" {
		t.Fatalf("this test's CPU cgroup through the probe: %q, %v", cg, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stopped probe: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the probe did not stop")
	}
	if _, err := c.Identity(context.Background()); err == nil {
		t.Fatal("the stopped probe still answers")
	}
	if err := serveNodeProbe(context.Background(), "127.0.0.1:-1", "n7", "", func(net.Addr) {}); err == nil {
		t.Fatal("a bad listen address was accepted")
	}
}
