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
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// Gate names, as archived and shown in reports.
const (
	GateHealthy  = "healthy"
	GateLimits   = "limits"
	GateProbe    = "probe"
	GateLoadPath = "load-path"
	GateLoad     = "load"
	GateEarly    = "early-stop"
	GateFault    = "fault"
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
	client := &http.Client{Timeout: 10 * time.Second}
	var sizes []string
	for _, ep := range eps {
		url := "http://" + ep.HostPort() + p.Path
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return results.Gate{Name: GateProbe, Detail: err.Error()}
		}
		resp, err := client.Do(req)
		if err != nil {
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: %v", url, err)}
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: %v", url, err)}
		}
		switch {
		case resp.StatusCode != p.Status:
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: status %d, want %d", url, resp.StatusCode, p.Status)}
		case len(body) < p.MinBytes:
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: %d bytes, want at least %d (dataset not loaded?)", url, len(body), p.MinBytes)}
		case p.Regex != nil && !p.Regex.Match(body):
			return results.Gate{Name: GateProbe, Detail: fmt.Sprintf("GET %s: body %q does not match %s", url, clip(body, 80), p.Regex)}
		}
		sizes = append(sizes, fmt.Sprintf("%s %d bytes", ep.HostPort(), len(body)))
	}
	return results.Gate{Name: GateProbe, Passed: true, Detail: "GET " + p.Path + ": " + strings.Join(sizes, ", ")}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// LimitsGate compares every task's enforced limits with what its variant declares.
func LimitsGate(lims []orchestrator.Limits) results.Gate {
	if len(lims) == 0 {
		return results.Gate{Name: GateLimits, Detail: "no task found to read limits from"}
	}
	var bad, ok []string
	for _, l := range lims {
		desc := fmt.Sprintf("%s/%s: %.3g cores, %d MiB", l.Group, l.Task, l.EffectiveCores, l.MemoryLimitMiB)
		switch {
		case l.DeclaredCores > 0 && !limits.Equal(l.EffectiveCores, l.DeclaredCores):
			bad = append(bad, fmt.Sprintf("%s/%s enforces %.3f cores, the variant declares %.3f", l.Group, l.Task, l.EffectiveCores, l.DeclaredCores))
		case l.DeclaredMemoryMiB > 0 && l.MemoryLimitMiB != l.DeclaredMemoryMiB:
			bad = append(bad, fmt.Sprintf("%s/%s enforces %d MiB, the variant declares %d", l.Group, l.Task, l.MemoryLimitMiB, l.DeclaredMemoryMiB))
		default:
			ok = append(ok, desc)
		}
	}
	if len(bad) > 0 {
		return results.Gate{Name: GateLimits, Detail: strings.Join(bad, "; ")}
	}
	return results.Gate{Name: GateLimits, Passed: true, Detail: strings.Join(ok, "; ")}
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
