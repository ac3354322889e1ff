package sweep

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
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
func probeFor(st experiment.Step, app contract.App) (Probe, error) {
	if st.Probe == nil {
		p, err := app.RequireProbe()
		return Probe(p), err
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

// probeReference is the probe's smallest body as the size the load's
// responses at the probe's path are held to half of, or 0 (no such hold)
// when the pack says its probe is no reference for them
// (orchbench_probe_load_reference = false) and the experiment did not
// replace the probe with its own.
func probeReference(st experiment.Step, app contract.App, body int) int {
	if st.Probe == nil && app.ProbeNoLoadReference {
		return 0
	}
	return body
}

// Check runs the probe against every endpoint: one empty instance is enough
// to make a measurement meaningless.
func (p Probe) Check(ctx context.Context, eps []orchestrator.Endpoint) results.Gate {
	g, _ := p.check(ctx, eps)
	return g
}

// probeSeen is what the probe saw besides its verdict: the smallest body,
// which responses under load are held to, and the slowest answer on a
// connection already open, the unloaded latency the connections' capacity
// is judged by (the load keeps its connections open, so a dial and a
// server's first-request warm-up are not part of it: they made a 1 ms
// server look like 11 ms and failed the little gate).
type probeSeen struct {
	Body    int
	Slowest time.Duration
}

func (p Probe) check(ctx context.Context, eps []orchestrator.Endpoint) (results.Gate, probeSeen) {
	seen := probeSeen{Body: -1}
	var sizes []string
	fail := func(format string, args ...any) (results.Gate, probeSeen) {
		return results.Gate{Name: gates.Probe, Detail: fmt.Sprintf(format, args...)}, probeSeen{}
	}
	if len(eps) == 0 {
		return fail("no registered instance to probe")
	}
	for _, ep := range eps {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: ep.NetNS.Dial}}
		url := "http://" + ep.HostPort() + p.Path
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fail("%v", err)
		}
		began := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return fail("GET %s: %v", url, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		took := time.Since(began)
		if err != nil {
			return fail("GET %s: %v", url, err)
		}
		if wrong := gates.ProbeAnswer(contract.Probe(p), url, resp.StatusCode, body); wrong != "" {
			return fail("%s", wrong)
		}
		warm, err := timeAgain(ctx, client, url)
		if err != nil {
			return fail("GET %s again on its open connection: %v", url, err)
		}
		sizes = append(sizes, fmt.Sprintf("%s %d bytes in %s (%s on an open connection)", ep.HostPort(), len(body), took.Round(10*time.Microsecond), warm.Round(10*time.Microsecond)))
		if seen.Body < 0 || len(body) < seen.Body {
			seen.Body = len(body)
		}
		seen.Slowest = max(seen.Slowest, warm)
	}
	return results.Gate{Name: gates.Probe, Passed: true, Detail: "GET " + p.Path + ": " + strings.Join(sizes, ", ")}, seen
}

// timeAgain times a second GET of url through client, whose connection the
// first one left open: the latency a load's persistent connection sees.
func timeAgain(ctx context.Context, client *http.Client, url string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 16<<20)); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

// probeRun is one probe of a deployment's measured service: its instances
// (nil when they could not be listed), the probe run, its verdict and what
// it saw.
type probeRun struct {
	eps   []orchestrator.Endpoint
	probe Probe
	gate  results.Gate
	seen  probeSeen
}

// probeDeployment runs the step's probe against the deployment's measured
// service as it is now.
func probeDeployment(ctx context.Context, st experiment.Step, dep *deployment) probeRun {
	var run probeRun
	var err error
	if run.eps, err = dep.orch.Endpoints(ctx, dep.app, dep.app.App.Service); err != nil {
		run.gate = results.Gate{Name: gates.Probe, Detail: err.Error()}
		return run
	}
	if run.probe, err = probeFor(st, dep.app.App); err != nil {
		run.gate = results.Gate{Name: gates.Probe, Detail: err.Error()}
		return run
	}
	run.gate, run.seen = run.probe.check(ctx, run.eps)
	return run
}
