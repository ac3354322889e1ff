package tcpbalance

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An instance added to the file takes connections without the balancer
// restarting, a connection already relayed keeps its backend, and a file
// rewritten to nothing or to junk leaves the set as it was.
func TestBackendsFileChangesTheSetWhileServing(t *testing.T) {
	a, b := echoNamed(t, "a"), echoNamed(t, "b")
	bal, addr := start(t, a)
	path := filepath.Join(t.TempDir(), "backends")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go bal.WatchFile(ctx, path, 20*time.Millisecond)
	if got := ask(t, addr); got != "a" {
		t.Fatalf("before the file exists the connection reached %q, want a (--backend)", got)
	}
	write("# instances\n" + a + "\n" + b + "\n")
	waitFor(t, func() bool { return len(bal.current()) == 2 })
	got := map[string]int{}
	for i := 0; i < 4; i++ {
		got[ask(t, addr)]++
	}
	if got["a"] != 2 || got["b"] != 2 {
		t.Fatalf("4 connections over the file's 2 backends went %v, want 2 each", got)
	}
	for _, text := range []string{"", "not-an-address\n"} {
		write(text)
		time.Sleep(100 * time.Millisecond)
		if n := len(bal.current()); n != 2 {
			t.Fatalf("after the file became %q the balancer has %d backends, want the 2 it had", text, n)
		}
	}
	write(b)
	waitFor(t, func() bool { return len(bal.current()) == 1 })
	if got := ask(t, addr); got != "b" {
		t.Fatalf("after a went from the file the connection reached %q, want b", got)
	}
}

func TestParseBackendsRefusesAnAddressWithoutPort(t *testing.T) {
	got, err := ParseBackends("10.0.0.1:80, 10.0.0.2:80\n10.0.0.1:80\n")
	if err != nil || len(got) != 2 {
		t.Fatalf("ParseBackends = %v, %v; want the 2 distinct backends", got, err)
	}
	if _, err := ParseBackends("10.0.0.1"); err == nil {
		t.Fatal("a backend without a port was accepted")
	}
}

func (b *Balancer) current() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Backends
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A backend by name is looked up at most once a second and its addresses
// taken in turn.
func TestNamedBackendIsResolvedOnceASecondAndRotated(t *testing.T) {
	var c nameCache
	a := c.pick(context.Background(), "localhost:80")
	if a != "127.0.0.1:80" && a != "[::1]:80" {
		t.Fatalf("localhost:80 picked %q", a)
	}
	first := c.entries["localhost"].at
	for i := 0; i < 10; i++ {
		c.pick(context.Background(), "localhost:80")
	}
	if !c.entries["localhost"].at.Equal(first) {
		t.Fatal("looked up again within a second")
	}
	if got := c.pick(context.Background(), "10.0.0.1:80"); got != "10.0.0.1:80" {
		t.Fatalf("an address backend became %q", got)
	}
	if got := c.pick(context.Background(), "no-such-host.invalid:80"); got != "no-such-host.invalid:80" {
		t.Fatalf("an unresolvable name became %q; the dial should say why it fails", got)
	}
}

// A name's address that refuses (a replica still starting) costs the
// connection a retry at the next address, not an error.
func TestNamedBackendTriesTheNextAddressWhenOneRefuses(t *testing.T) {
	var c nameCache
	c.entries = map[string]*nameEntry{"svc": {addrs: []string{"127.0.0.1", "127.0.0.2"}, at: time.Now()}}
	got := c.addresses(context.Background(), "svc:80")
	if len(got) != 2 || got[0] != "127.0.0.1:80" || got[1] != "127.0.0.2:80" {
		t.Fatalf("addresses %v", got)
	}
	if got := c.addresses(context.Background(), "svc:80"); got[0] != "127.0.0.2:80" {
		t.Fatalf("the next connection starts at %v, want the second address", got)
	}
}
