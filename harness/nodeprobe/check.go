package nodeprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/netns"
)

// CheckRequest is a health check to run against a container from inside
// its network namespace, on its node: the harness elsewhere cannot enter it.
type CheckRequest struct {
	ContainerID string `json:"container_id"`
	// Type is "http" (a GET of Path answered 2xx or 3xx) or "tcp" (a
	// connection accepted).
	Type string `json:"type"`
	// Address is host:port as the container sees it.
	Address string        `json:"address"`
	Path    string        `json:"path,omitempty"`
	Timeout time.Duration `json:"timeout_ns"`
}

// CheckResponse is the check's verdict; a failing check is an answer, not
// an error (the container was found and asked).
type CheckResponse struct {
	// PID is the container's process whose namespace the check ran in.
	PID     int    `json:"pid"`
	Healthy bool   `json:"healthy"`
	Detail  string `json:"detail,omitempty"`
}

// MaxCheckTimeout bounds one check, so no request holds the probe for long.
const MaxCheckTimeout = 30 * time.Second

// RunCheck runs one check from inside namespace ns ("" for this process's):
// nil when the task answered as the check wants.
func RunCheck(ctx context.Context, ns netns.Path, c CheckRequest) error {
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, c.Timeout)
		defer cancel()
		return ns.Dial(ctx, "tcp", addr)
	}
	switch c.Type {
	case "tcp":
		conn, err := dial(ctx, c.Address)
		if err != nil {
			return err
		}
		return conn.Close()
	case "http":
		client := &http.Client{Timeout: c.Timeout, Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
				return dial(ctx, addr)
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
	return fmt.Errorf("check type %q (known: http, tcp)", c.Type)
}

// checkContainer finds the container's process and runs the check in its
// network namespace. The work is the probe's, in the probe's cgroup: the
// task's CPU quota pays nothing.
func checkContainer(ctx context.Context, c CheckRequest) (CheckResponse, error) {
	if c.Timeout <= 0 || c.Timeout > MaxCheckTimeout {
		return CheckResponse{}, fmt.Errorf("a check timeout of %s is not in (0, %s]", c.Timeout, MaxCheckTimeout)
	}
	if c.Type != "http" && c.Type != "tcp" {
		return CheckResponse{}, errors.New("check type " + strconv.Quote(c.Type) + " is not http or tcp")
	}
	procs, err := limits.Processes()
	if err != nil {
		return CheckResponse{}, err
	}
	p, err := containerProcess(procs, c.ContainerID)
	if err != nil {
		return CheckResponse{}, err
	}
	ns := netns.Path(filepath.Join(limits.ProcRoot, strconv.Itoa(p.PID), "ns", "net"))
	if err := RunCheck(ctx, ns, c); err != nil {
		return CheckResponse{PID: p.PID, Detail: err.Error()}, nil
	}
	return CheckResponse{PID: p.PID, Healthy: true}, nil
}
