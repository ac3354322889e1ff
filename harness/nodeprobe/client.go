package nodeprobe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/sockets"
)

// DefaultTimeout bounds one call to a probe (AcceptorOf's wait comes on top).
const DefaultTimeout = 10 * time.Second

// maxResponseBytes bounds an answer: the process list of a busy node is the
// largest, a few hundred bytes per process.
const maxResponseBytes = 64 << 20

// Client reads a node through the probe server it runs.
type Client struct {
	// NodeName is the node's name as its orchestrator gives it.
	NodeName string
	// BaseURL is the probe's address: "http://10.77.0.11:7070".
	BaseURL string
	// HTTP makes the requests; http.DefaultClient when nil.
	HTTP *http.Client
	// Timeout bounds each call; DefaultTimeout when 0.
	Timeout time.Duration
	// Token is sent in TokenHeader when set.
	Token string
}

var _ Node = (*Client)(nil)

// NewClient reaches the probe of node name at addr, "host:port" or a URL.
func NewClient(name, addr string) *Client {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return &Client{NodeName: name, BaseURL: strings.TrimRight(addr, "/")}
}

func (c *Client) Name() string { return c.NodeName }

// Identity is the name the probe gives its node, to check that an address
// reaches the node it is meant to.
func (c *Client) Identity(ctx context.Context) (string, error) {
	r, err := call(ctx, c, identityEndpoint, NoRequest{}, 0)
	return r.Node, err
}

func (c *Client) Facts(ctx context.Context) (map[string]string, error) {
	return call(ctx, c, factsEndpoint, NoRequest{}, 0)
}

func (c *Client) Limits(ctx context.Context, pid int) (limits.Enforced, error) {
	return call(ctx, c, limitsEndpoint, PIDRequest{PID: pid}, 0)
}

func (c *Client) Processes(ctx context.Context) ([]limits.Membership, error) {
	return call(ctx, c, processesEndpoint, NoRequest{}, 0)
}

func (c *Client) CPUCgroupOf(ctx context.Context, pid int) (string, error) {
	return call(ctx, c, cpuCgroupEndpoint, PIDRequest{PID: pid}, 0)
}

// Usage stamps the reading with the middle of the call on this machine's
// clock: the windows it is cut to are measured here, and a node's clock may
// be off from this one by more than a call takes.
func (c *Client) Usage(ctx context.Context, cgroup string) (limits.Usage, error) {
	sent := time.Now()
	u, err := call(ctx, c, usageEndpoint, CgroupRequest{Cgroup: cgroup}, 0)
	if err == nil {
		u.At = sent.Add(time.Since(sent) / 2)
	}
	return u, err
}

func (c *Client) ResidentBytes(ctx context.Context, memoryCgroup string) (int64, error) {
	return call(ctx, c, residentEndpoint, CgroupRequest{Cgroup: memoryCgroup}, 0)
}

// AcceptorOf asks the node; with an error, found is false whatever the node
// found (the error says what happened).
func (c *Client) AcceptorOf(ctx context.Context, ns netns.Path, addr string, within time.Duration) (sockets.Acceptor, bool, error) {
	r, err := call(ctx, c, acceptorEndpoint, AcceptorRequest{NetNS: ns, Addr: addr, Within: within}, within)
	return r.Acceptor, r.Found && err == nil, err
}

func (c *Client) Executables(ctx context.Context) ([]Executable, error) {
	return call(ctx, c, executablesEndpoint, NoRequest{}, 0)
}

func (c *Client) ContainerProcess(ctx context.Context, containerID string) (TaskProcess, error) {
	return call(ctx, c, containerEndpoint, ContainerRequest{ContainerID: containerID}, 0)
}

func (c *Client) NomadTaskProcess(ctx context.Context, allocID, task string) (TaskProcess, error) {
	return call(ctx, c, nomadTaskEndpoint, NomadTaskRequest{AllocID: allocID, Task: task}, 0)
}

func (c *Client) SignalContainer(ctx context.Context, containerID, signal string) (TaskProcess, error) {
	return call(ctx, c, signalEndpoint, SignalRequest{ContainerID: containerID, Signal: signal}, 0)
}

// CheckContainer waits up to the check's timeout on top of the call's.
func (c *Client) CheckContainer(ctx context.Context, req CheckRequest) (CheckResponse, error) {
	return call(ctx, c, checkEndpoint, req, req.Timeout)
}

// call posts one request. A node's own failure comes back as its *Error.
// A failure to reach the probe is wrapped with %v, not %w: a refused
// connection to the probe must not read as one refused by the address an
// AcceptorOf asked about.
func call[Req, Resp any](ctx context.Context, c *Client, ep endpoint[Req, Resp], req Req, extra time.Duration) (Resp, error) {
	var out Resp
	op := ep.op(req)
	fail := func(format string, args ...any) (Resp, error) {
		return out, fmt.Errorf("node %s: %s: probe at %s: %s", c.NodeName, op, c.BaseURL, fmt.Sprintf(format, args...))
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+extra)
	defer cancel()
	body, err := json.Marshal(req)
	if err != nil {
		return fail("encode the request: %v", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+ep.path, bytes.NewReader(body))
	if err != nil {
		return fail("%v", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set(NodeHeader, c.NodeName)
	if c.Token != "" {
		hr.Header.Set(TokenHeader, c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(hr)
	if err != nil {
		return fail("%v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes))
	if err != nil {
		return fail("read the answer: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		var e Error
		if json.Unmarshal(b, &e) == nil && e.Message != "" {
			return out, &e
		}
		return fail("answered %s: %q", res.Status, head(b, 200))
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return fail("unreadable answer: %v", err)
	}
	return out, nil
}

// head is the beginning of b, for a message.
func head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
