// Package netns reaches addresses inside a network namespace from outside
// it, without a relay: a socket belongs to the namespace it is created in,
// so only its creation happens there, on an OS thread locked for that, and
// the connection is then used like any other. The Kubernetes node lives in
// a namespace of its own, and the harness probes and loads it this way;
// the Swarm adapter checks a task's health the same way.
package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// Path names a network namespace by a file that holds it: a bind mount
// under /run/netns (ip netns add) or /proc/<pid>/ns/net. The empty Path is
// the harness's own namespace.
type Path string

// OfProcess is the namespace process pid runs in.
func OfProcess(pid int) Path { return Path(fmt.Sprintf("/proc/%d/ns/net", pid)) }

// Named is a namespace made by `ip netns add name`.
func Named(name string) Path { return Path("/run/netns/" + name) }

// Dial opens a connection to addr from inside the namespace.
func (p Path) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	if p == "" {
		return d.DialContext(ctx, network, addr)
	}
	var conn net.Conn
	err := p.Do(func() error {
		var err error
		conn, err = d.DialContext(ctx, network, addr)
		return err
	})
	return conn, err
}

// Do runs f on an OS thread inside the namespace. f must not start
// goroutines that need the namespace: they run on other threads.
func (p Path) Do(f func() error) error {
	if p == "" {
		return f()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// A thread left in another namespace must not run other goroutines:
		// unlocking only after a successful return lets the runtime reuse it,
		// and a goroutine that exits locked takes its thread with it.
		own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer own.Close()
		target, err := os.Open(string(p))
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("network namespace %s: %w", p, err)
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("enter network namespace %s: %w", p, err)
			return
		}
		ferr := f()
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- ferr
	}()
	return <-done
}

// Command runs a program inside the namespace (and only its network
// namespace: it keeps the harness's mounts, files and cgroup).
func (p Path) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if p == "" {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + string(p), "--", name}, args...)...)
}
