package testutil

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ListenAndHold listens on a loopback port and holds what connects there
// (see Hold); it returns the address.
func ListenAndHold(t testing.TB, answer func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	Hold(t, ln, answer)
	return ln.Addr().String()
}

// Hold accepts every connection to ln, which stays open until the test
// ends; answer, when set, is handed each one in a goroutine of its own.
// Connections accepted and never answered are what a stalled server, or a
// relay holding a port, looks like to a client. ln is closed at the end.
func Hold(t testing.TB, ln net.Listener, answer func(net.Conn)) {
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
			if answer != nil {
				go answer(c)
			}
		}
	}()
}

// FreePort is a loopback TCP port nothing listened on a moment ago: for a
// server a test starts as another process, or an address that must refuse.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// FreeAddr is FreePort's host:port: an address that refuses connections.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}

// WaitTCP waits up to within for addr to accept a connection, failing the
// test with name when it does not.
func WaitTCP(t testing.TB, name, addr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not listen on %s within %s", name, addr, within)
}

// FlushMemcached empties the memcached at addr (flush_all), so later reads
// must go past it.
func FlushMemcached(t testing.TB, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprint(conn, "flush_all\r\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "OK" {
		t.Fatalf("memcached flush_all on %s: %q %v", addr, line, err)
	}
}

// RedisCommand sends one inline command (words separated by spaces) to the
// Redis at addr and returns its reply's first line, e.g. "+OK" or ":3".
func RedisCommand(t testing.TB, addr, command string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprint(conn, command+"\r\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("redis %s on %s: %v", command, addr, err)
	}
	return strings.TrimSpace(line)
}
