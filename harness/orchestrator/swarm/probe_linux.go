package swarm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// dialIn opens a TCP connection to addr from inside the network namespace
// of process pid. The work is the harness's, in the harness's cgroup: the
// task's CPU quota pays nothing.
func dialIn(pid int, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return netns.OfProcess(pid).Dial(ctx, "tcp", addr)
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
