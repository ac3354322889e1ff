package testutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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

func TestConsulKVStoresAndDeletesRecursively(t *testing.T) {
	kv := NewConsulKV()
	srv := httptest.NewServer(kv)
	defer srv.Close()
	do := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader("v"))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	do(http.MethodPut, "/v1/kv/a/x")
	do(http.MethodPut, "/v1/kv/a/y")
	do(http.MethodPut, "/v1/kv/b")
	if code, body := do(http.MethodGet, "/v1/kv/a/x"); code != 200 || body != "v" {
		t.Errorf("get a/x: %d %q", code, body)
	}
	kv.FailNextDeletes(1)
	if code, _ := do(http.MethodDelete, "/v1/kv/a?recurse"); code != http.StatusInternalServerError {
		t.Errorf("the failing delete answered %d", code)
	}
	do(http.MethodDelete, "/v1/kv/a?recurse")
	if keys := kv.Keys(""); len(keys) != 1 || keys[0] != "b" {
		t.Errorf("after deleting a recursively: %v", keys)
	}
	if code, _ := do(http.MethodGet, "/v1/kv/a/x"); code != http.StatusNotFound {
		t.Errorf("deleted key answered %d", code)
	}
}

func TestRedisCommandSendsOneInlineCommand(t *testing.T) {
	got := make(chan string, 1)
	addr := ListenAndHold(t, func(c net.Conn) {
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- line
		c.Write([]byte(":3\r\n"))
	})
	if reply := RedisCommand(t, addr, "ZCARD user-review:1"); reply != ":3" {
		t.Errorf("reply %q, want :3", reply)
	}
	if line := <-got; line != "ZCARD user-review:1\r\n" {
		t.Errorf("the server read %q", line)
	}
}
