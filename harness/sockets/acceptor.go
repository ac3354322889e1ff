// Package sockets finds which process accepts the connections to a local
// address: the load-path gate uses it to tell an instance that accepts its
// connections itself, or a kernel NAT rule that carries them into the
// instance's namespace, from a userland relay (docker-proxy, an SSH tunnel,
// a forwarder) that accepts them here and passes them on.
package sockets

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/netns"
)

// ProcRoot is where the proc filesystem is mounted.
var ProcRoot = "/proc"

// Acceptor is the process that accepted a connection.
type Acceptor struct {
	PID int
	// Command is the process's name (/proc/<pid>/comm).
	Command string
}

// tcpEstablished is the state code of a connected socket in /proc/net/tcp.
const tcpEstablished = "01"

// AcceptorOf opens a connection to addr from inside network namespace ns
// ("" for the harness's own) and finds the process in that namespace that
// holds its other end. found is false when no socket there holds it: the
// kernel carried the connection into another namespace (a NAT rule), where
// the instance accepted it. Holding a listening socket proves nothing:
// docker reserves published ports with one it never uses.
func AcceptorOf(ns netns.Path, addr string, within time.Duration) (a Acceptor, found bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	conn, err := ns.Dial(ctx, "tcp", addr)
	cancel()
	if err != nil {
		return a, false, err
	}
	defer conn.Close()
	local := conn.LocalAddr().(*net.TCPAddr)
	remote := conn.RemoteAddr().(*net.TCPAddr)
	// the server's side: local address = where we connected, remote = our end
	want := [2]string{procAddr(remote), procAddr(local)}
	deadline := time.Now().Add(within)
	for {
		var inode string
		var present bool
		err := ns.Do(func() error {
			var err error
			inode, present, err = serverSocket(ns, want)
			return err
		})
		if err != nil {
			return a, false, err
		}
		if !present {
			return a, false, nil
		}
		if inode != "0" {
			return owner(inode)
		}
		// still in the listener's accept queue: no process holds it yet
		if time.Now().After(deadline) {
			return a, true, fmt.Errorf("the connection to %s was not accepted within %s by the process listening there", addr, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procAddr writes an address as /proc/net/tcp does: the IP in host byte
// order per 32-bit word, hex, then the port.
func procAddr(a *net.TCPAddr) string {
	ip := a.IP.To4()
	if ip == nil {
		ip = a.IP.To16()
	}
	b := make([]byte, len(ip))
	for i := 0; i < len(ip); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = ip[i+3], ip[i+2], ip[i+1], ip[i]
	}
	return strings.ToUpper(hex.EncodeToString(b)) + ":" + fmt.Sprintf("%04X", a.Port)
}

// serverSocket finds the established socket with local and remote addresses
// want in the TCP tables of the calling thread's namespace, and its inode
// ("0" until accepted).
func serverSocket(ns netns.Path, want [2]string) (inode string, present bool, err error) {
	// /proc/net shows the main thread's namespace; a thread that entered
	// another one sees it under thread-self
	dir := ProcRoot
	if ns != "" {
		dir = filepath.Join(ProcRoot, "thread-self")
	}
	for _, table := range []string{"net/tcp", "net/tcp6"} {
		f, err := os.Open(filepath.Join(dir, table))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", false, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 10 && fields[3] == tcpEstablished && fields[1] == want[0] && fields[2] == want[1] {
				f.Close()
				return fields[9], true, nil
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return "", false, err
		}
	}
	return "", false, nil
}

// owner finds the process holding the socket with inode.
func owner(inode string) (Acceptor, bool, error) {
	procs, err := os.ReadDir(ProcRoot)
	if err != nil {
		return Acceptor{}, true, err
	}
	target := "socket:[" + inode + "]"
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(ProcRoot, p.Name(), "fd"))
		if err != nil {
			continue // exited, or not ours to read
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(ProcRoot, p.Name(), "fd", fd.Name())); err == nil && link == target {
				comm, _ := os.ReadFile(filepath.Join(ProcRoot, p.Name(), "comm"))
				return Acceptor{PID: pid, Command: strings.TrimSpace(string(comm))}, true, nil
			}
		}
	}
	return Acceptor{}, true, fmt.Errorf("socket %s is held by no process this user can see", inode)
}
