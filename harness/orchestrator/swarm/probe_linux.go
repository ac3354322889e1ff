package swarm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	"golang.org/x/sys/unix"
)

// dialIn opens a TCP connection to addr from inside the network namespace
// of process pid. A socket belongs to the namespace it was created in, so
// only its creation happens in the task's namespace, on an OS thread locked
// for that; the connection is then used like any other. The work is the
// harness's, in the harness's cgroup: the task's CPU quota pays nothing.
func dialIn(pid int, addr string, timeout time.Duration) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// A thread left in another namespace must not run other goroutines:
		// unlocking only after a successful return lets the runtime reuse it,
		// and a goroutine that exits locked takes its thread with it.
		own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			done <- result{err: err}
			runtime.UnlockOSThread()
			return
		}
		defer own.Close()
		target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			done <- result{err: fmt.Errorf("network namespace of pid %d: %w", pid, err)}
			runtime.UnlockOSThread()
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("enter the network namespace of pid %d: %w", pid, err)}
			runtime.UnlockOSThread()
			return
		}
		conn, err := net.DialTimeout("tcp", addr, timeout)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}

// probe runs a check against the task whose process is pid.
func probe(ctx context.Context, c *translate.Check, pid int) error {
	switch c.Type {
	case "tcp":
		conn, err := dialIn(pid, c.Address, c.Timeout)
		if err != nil {
			return err
		}
		return conn.Close()
	case "http":
		client := &http.Client{Timeout: c.Timeout, Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				return dialIn(pid, addr, c.Timeout)
			},
		}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.Address+c.Path, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s: status %d", c.Path, resp.StatusCode)
		}
		return nil
	}
	return fmt.Errorf("check type %q", c.Type)
}
