package tcpbalance

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// echoNamed answers every line with its name, so a client sees which
// backend it reached.
func echoNamed(t *testing.T, name string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					if _, err := c.Write([]byte(name + "\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// deadAddr is an address nothing listens on.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

func start(t *testing.T, backends ...string) (*Balancer, string) {
	t.Helper()
	b, err := New(backends)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go b.Serve(ctx, l)
	return b, l.Addr().String()
}

func ask(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("who\n")); err != nil {
		t.Fatal(err)
	}
	s, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.TrimSpace(s)
}

func TestConnectionsTakeTurns(t *testing.T) {
	_, addr := start(t, echoNamed(t, "a"), echoNamed(t, "b"), echoNamed(t, "c"))
	got := map[string]int{}
	for i := 0; i < 6; i++ {
		got[ask(t, addr)]++
	}
	if got["a"] != 2 || got["b"] != 2 || got["c"] != 2 {
		t.Fatalf("6 connections over 3 backends went %v, want 2 each", got)
	}
}

func TestDeadBackendIsSkipped(t *testing.T) {
	dead := deadAddr(t)
	b, addr := start(t, dead, echoNamed(t, "a"), echoNamed(t, "b"))
	for i := 0; i < 6; i++ {
		if got := ask(t, addr); got != "a" && got != "b" {
			t.Fatalf("connection %d answered %q, want a live backend", i, got)
		}
	}
	b.mu.Lock()
	_, down := b.downUntil[dead]
	b.mu.Unlock()
	if !down {
		t.Fatalf("the dead backend %s is not marked down", dead)
	}
}

func TestEveryBackendDeadClosesTheConnection(t *testing.T) {
	_, addr := start(t, deadAddr(t))
	if got := ask(t, addr); !strings.HasPrefix(got, "error:") {
		t.Fatalf("with no live backend the connection answered %q, want it closed", got)
	}
}

func TestBadBackendsAreRefused(t *testing.T) {
	for _, bs := range [][]string{nil, {"10.0.0.1"}, {"10.0.0.1:6443", "10.0.0.1:6443"}} {
		if _, err := New(bs); err == nil {
			t.Errorf("New(%q) accepted", bs)
		}
	}
}
