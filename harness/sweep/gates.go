package sweep

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// Gate names, as archived and shown in reports.
const (
	GateHealthy   = "healthy"
	GateLimits    = "limits"
	GateProbe     = "probe"
	GateLoadPath  = "load-path"
	GateLoad      = "load"
	GateEarly     = "early-stop"
	GateFault     = "fault"
	GateResponses = "responses"
)

// Probe is an application's correctness check: a response that proves the
// data is there (the testbed we replace measured empty timelines for months).
type Probe struct {
	Path     string
	Status   int
	MinBytes int
	Regex    *regexp.Regexp
}

// probeFor is the experiment's probe for the step when it declares one, else the pack's.
func probeFor(st experiment.Step, meta map[string]string) (Probe, error) {
	if st.Probe == nil {
		return ProbeFromMeta(meta)
	}
	p := Probe{Path: st.Probe.Path, Status: st.Probe.Status, MinBytes: st.Probe.MinBytes}
	if st.Probe.Regex != "" {
		re, err := regexp.Compile(st.Probe.Regex)
		if err != nil {
			return p, err
		}
		p.Regex = re
	}
	return p, nil
}

// ProbeFromMeta reads the probe a pack declares in its job meta
// (orchbench_probe_path, _status, _min_bytes, _regex).
func ProbeFromMeta(meta map[string]string) (Probe, error) {
	p := Probe{Path: meta["orchbench_probe_path"], Status: http.StatusOK}
	if p.Path == "" {
		return p, fmt.Errorf("the pack declares no orchbench_probe_path in its job meta; every measured app needs a correctness probe")
	}
	if s := meta["orchbench_probe_status"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return p, fmt.Errorf("orchbench_probe_status %q: %w", s, err)
		}
		p.Status = n
	}
	if s := meta["orchbench_probe_min_bytes"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return p, fmt.Errorf("orchbench_probe_min_bytes %q: %w", s, err)
		}
		p.MinBytes = n
	}
	if s := meta["orchbench_probe_regex"]; s != "" {
		re, err := regexp.Compile(s)
		if err != nil {
			return p, fmt.Errorf("orchbench_probe_regex %q: %w", s, err)
		}
		p.Regex = re
	}
	return p, nil
}

// Check runs the probe against every endpoint: one empty instance is enough
// to make a measurement meaningless.
func (p Probe) Check(ctx context.Context, eps []orchestrator.Endpoint) results.Gate {
	g, _ := p.check(ctx, eps)
	return g
}

// check also returns the smallest body seen, the baseline the responses
// under load are held to.
func (p Probe) check(ctx context.Context, eps []orchestrator.Endpoint) (results.Gate, int) {
	smallest := -1
	client := &http.Client{Timeout: 10 * time.Second}
	var sizes []string
	for _, ep := range eps {
		url := "http://" + ep.HostPort() + p.Path
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return results.Gate{Name: GateProbe, Detail: err.Error()}, 0
		}
		resp, err := client.Do(req)
		if err != nil {
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: %v", url, err)}, 0
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: %v", url, err)}, 0
		}
		switch {
		case resp.StatusCode != p.Status:
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: status %d, want %d", url, resp.StatusCode, p.Status)}, 0
		case len(body) < p.MinBytes:
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: %d bytes, want at least %d (dataset not loaded?)", url, len(body), p.MinBytes)}, 0
		case p.Regex != nil && !p.Regex.Match(body):
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: body %q does not match %s", url, clip(body, 80), p.Regex)}, 0
		}
		sizes = append(sizes, fmt.Sprintf("%s %d bytes", ep.HostPort(), len(body)))
		if smallest < 0 || len(body) < smallest {
			smallest = len(body)
		}
	}
	return results.Gate{Name: GateProbe, Passed: true, Detail: "GET " + p.Path + ": " + strings.Join(sizes, ", ")}, smallest
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// ResponsesGate holds the responses under load to the probe: an endpoint the
// probe exercised must answer on average at least half the probe's size (an
// emptied cache or store shows as tiny answers), and non-2xx/3xx responses
// must stay within 1 % (errors are not a measurement of the app's speed).
func ResponsesGate(p Probe, probeBytes int, res *loadgen.Result) results.Gate {
	path, _, _ := strings.Cut(p.Path, "?")
	var notes []string
	for _, e := range res.Endpoints {
		label := e.Label
		if i := strings.IndexByte(label, ' '); i >= 0 {
			label = label[i+1:] // "GET /path" labels
		}
		label, _, _ = strings.Cut(label, "?")
		if label != path || e.Count == 0 {
			continue
		}
		mean := float64(e.Bytes) / float64(e.Count)
		if mean < float64(probeBytes)/2 {
			return results.Gate{Name: GateResponses, Detail: fmt.Sprintf("%s answered %.0f bytes on average under load, less than half the probe's %d", e.Label, mean, probeBytes)}
		}
		notes = append(notes, fmt.Sprintf("%s %.0f bytes on average (probe %d)", e.Label, mean, probeBytes))
	}
	total := res.Requests
	if total > 0 && float64(res.Errors.Status)/float64(total) > 0.01 {
		return results.Gate{Name: GateResponses, Detail: fmt.Sprintf("%d of %d responses were not 2xx/3xx (%v)", res.Errors.Status, total, res.StatusCodes)}
	}
	notes = append(notes, fmt.Sprintf("%d non-2xx/3xx of %d", res.Errors.Status, total))
	return results.Gate{Name: GateResponses, Passed: true, Detail: strings.Join(notes, "; ")}
}

// LoadPathGate makes sure load goes straight to the instances the registry
// knows, not through a tunnel or proxy that would measure itself instead
// (the testbed we replace sent load through an SSH tunnel).
func LoadPathGate(target string, eps []orchestrator.Endpoint) results.Gate {
	for _, ep := range eps {
		if ep.HostPort() == target {
			kind := "node address"
			if ip := net.ParseIP(ep.Address); ip != nil && ip.IsLoopback() {
				kind = "loopback"
			}
			return results.Gate{Name: GateLoadPath, Passed: true, Detail: fmt.Sprintf("direct to %s instance %s (%s)", ep.Service, target, kind)}
		}
	}
	return results.Gate{Name: GateLoadPath, Detail: fmt.Sprintf("target %s is not a registered instance of the deployment", target)}
}
