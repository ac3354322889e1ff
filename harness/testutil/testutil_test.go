package testutil

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestListenAndHoldKeepsConnectionsOpenAndAnswers(t *testing.T) {
	silent := ListenAndHold(t, nil)
	c, err := net.Dial("tcp", silent)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var ne net.Error
	if _, err := c.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("a held connection was not left open and silent: %v", err)
	}

	answering := ListenAndHold(t, func(c net.Conn) { c.Write([]byte("hi")) })
	c2, err := net.Dial("tcp", answering)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2)
	if _, err := c2.Read(buf); err != nil || string(buf) != "hi" {
		t.Errorf("read %q, %v", buf, err)
	}
}

func TestFreePortRefuses(t *testing.T) {
	port := FreePort(t)
	if port <= 0 {
		t.Fatalf("port %d", port)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Errorf("port %d accepted a connection", port)
	}
}

func TestRepoRootHoldsThisPackage(t *testing.T) {
	root := RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "harness", "testutil", "repo.go")); err != nil {
		t.Errorf("root %s: %v", root, err)
	}
}
