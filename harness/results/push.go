package results

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
)

// DefaultVMURL is where the cluster's VictoriaMetrics listens.
const DefaultVMURL = "http://127.0.0.1:8428"

// VMURL returns $ORCHBENCH_VM_URL or DefaultVMURL.
func VMURL() string {
	if u := os.Getenv("ORCHBENCH_VM_URL"); u != "" {
		return u
	}
	return DefaultVMURL
}

// Pusher sends step results to VictoriaMetrics' Prometheus import endpoint.
// Every sample carries an explicit timestamp derived from the archive, so a
// second push of the same archive writes the same (series, timestamp) pairs,
// which VictoriaMetrics started with -dedup.minScrapeInterval=1ms collapses.
type Pusher struct {
	URL    string       // base URL, e.g. http://127.0.0.1:8428
	Client *http.Client // default: 30 s timeout
	// Attempts per request (default 5), waiting Backoff, 2×Backoff, ...
	// between them (default 500 ms).
	Attempts int
	Backoff  time.Duration
}

// PushStep sends one step's samples.
func (p Pusher) PushStep(ctx context.Context, r StepResult) (samples int, err error) {
	body := Exposition(r)
	return bytes.Count(body, []byte{'\n'}), p.post(ctx, body)
}

// PushSweep sends every completed step of a sweep, one request per step,
// with the earlier attempts of steps run again: VictoriaMetrics then holds
// what the archive holds (an invalid attempt shows as such at its own
// time), whether or not it was up when each ran. It only reads the archive.
// It returns the number of samples sent.
func PushSweep(ctx context.Context, a Archive, sweepID, vmURL string) (int, error) {
	steps, err := a.LoadSteps(sweepID)
	if err != nil {
		return 0, err
	}
	p := Pusher{URL: vmURL}
	total := 0
	for _, r := range steps {
		earlier, err := a.EarlierAttempts(sweepID, r.Step)
		if err != nil {
			return total, err
		}
		for _, attempt := range append(earlier, r) {
			n, err := p.PushStep(ctx, attempt)
			if err != nil {
				return total, fmt.Errorf("push step %s: %w", r.Step, err)
			}
			total += n
		}
	}
	return total, nil
}

func (p Pusher) post(ctx context.Context, body []byte) error {
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	attempts := p.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	backoff := p.Backoff
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	url := strings.TrimRight(p.URL, "/") + "/api/v1/import/prometheus"
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
			case <-time.After(backoff << (i - 1)):
			}
		}
		retry, err := p.once(ctx, client, url, body)
		if err == nil {
			return nil
		}
		last = err
		if !retry {
			return err
		}
	}
	return fmt.Errorf("after %d attempts: %w", attempts, last)
}

// once sends the body; retry says whether the failure may be transient.
func (p Pusher) once(ctx context.Context, client *http.Client, url string, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "text/plain; version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	err = fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
	// Server trouble and throttling pass; a rejected body will be rejected again.
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, err
}

// Exposition renders a step as Prometheus text with millisecond timestamps:
// summary series at the step's end, per-second series at Start + t seconds.
// The metric names and labels are documented in docs/metrics.md.
func Exposition(r StepResult) []byte {
	w := &expoWriter{base: baseLabels(r.Labels)}
	end := r.End.UnixMilli()

	w.sample("orchbench_step_offered_rps", nil, r.OfferedRPS, end)
	w.sample("orchbench_step_achieved_rps", nil, r.AchievedRPS, end)
	w.sample("orchbench_step_requests_total", nil, float64(r.Requests), end)
	w.sample("orchbench_step_errors_total", nil, float64(r.Errors), end)
	w.sample("orchbench_step_error_ratio", nil, r.ErrorRatio(), end)
	w.sample("orchbench_step_bytes_total", nil, float64(r.Bytes), end)
	if r.Requests > 0 {
		w.sample("orchbench_step_bytes_per_response", nil, float64(r.Bytes)/float64(r.Requests), end)
	}
	// "valid" in the sense dashboards filter on: the figures are a measurement
	w.sample("orchbench_step_valid", nil, boolValue(r.Measured()), end)
	for _, o := range []Outcome{OutcomeValid, OutcomeBroken, OutcomeInvalid} {
		w.sample("orchbench_step_outcome", []string{"outcome", string(o)}, boolValue(r.Outcome == o), end)
	}
	w.sample("orchbench_step_duration_seconds", nil, r.End.Sub(r.Start).Seconds(), end)
	if s, ok := ShippingOf(r); ok && !s.Undeclared {
		w.sample("orchbench_step_agent_cores", []string{"shipping", s.Mode}, s.Cores, end)
	}
	for _, g := range r.Gates {
		w.sample("orchbench_step_gate_passed", []string{"gate", g.Name}, boolValue(g.Passed), end)
	}
	w.latency("orchbench_step_latency_ms", []string{"kind", "corrected"}, r.Corrected, end)
	w.latency("orchbench_step_latency_ms", []string{"kind", "uncorrected"}, r.Uncorrected, end)
	for _, code := range slices.Sorted(maps.Keys(r.StatusCodes)) {
		w.sample("orchbench_step_responses_total", []string{"code", code}, float64(r.StatusCodes[code]), end)
	}
	for _, class := range slices.Sorted(maps.Keys(r.ErrorClasses)) {
		w.sample("orchbench_step_error_class_total", []string{"class", class}, float64(r.ErrorClasses[class]), end)
	}
	for _, e := range r.Endpoints {
		ep := []string{"endpoint", e.Name}
		w.sample("orchbench_endpoint_requests_total", ep, float64(e.Requests), end)
		w.sample("orchbench_endpoint_errors_total", ep, float64(e.Errors), end)
		w.sample("orchbench_endpoint_bytes_total", ep, float64(e.Bytes), end)
		w.latency("orchbench_endpoint_latency_ms", ep, e.Latency, end)
	}
	for _, s := range r.Series {
		ts := r.Start.Add(time.Duration(s.T * float64(time.Second))).UnixMilli()
		w.sample("orchbench_second_offered_rps", nil, s.Offered, ts)
		w.sample("orchbench_second_achieved_rps", nil, s.Achieved, ts)
		w.sample("orchbench_second_errors", nil, float64(s.Errors), ts)
		w.sample("orchbench_second_latency_ms", []string{"quantile", "0.5"}, s.P50Ms, ts)
		w.sample("orchbench_second_latency_ms", []string{"quantile", "0.99"}, s.P99Ms, ts)
	}
	return w.buf.Bytes()
}

type expoWriter struct {
	base string // rendered step labels, without braces
	buf  bytes.Buffer
}

// latency writes quantile series; max is quantile "1", mean its own metric.
func (w *expoWriter) latency(name string, extra []string, l Latency, ts int64) {
	for _, q := range []struct {
		q string
		v float64
	}{{"0.5", l.P50}, {"0.75", l.P75}, {"0.9", l.P90}, {"0.99", l.P99}, {"0.999", l.P999}, {"1", l.Max}} {
		w.sample(name, append(append([]string(nil), extra...), "quantile", q.q), q.v, ts)
	}
	w.sample(strings.TrimSuffix(name, "_ms")+"_mean_ms", extra, l.Mean, ts)
}

func (w *expoWriter) sample(name string, extra []string, v float64, ts int64) {
	w.buf.WriteString(name)
	w.buf.WriteByte('{')
	w.buf.WriteString(w.base)
	for i := 0; i+1 < len(extra); i += 2 {
		w.buf.WriteByte(',')
		writeLabel(&w.buf, extra[i], extra[i+1])
	}
	w.buf.WriteString("} ")
	w.buf.WriteString(formatValue(v))
	w.buf.WriteByte(' ')
	w.buf.WriteString(strconv.FormatInt(ts, 10))
	w.buf.WriteByte('\n')
}

func baseLabels(l Labels) string {
	var b bytes.Buffer
	pairs := []string{
		"sweep", l.Sweep, "step", l.Step, "app", l.App, "orchestrator", l.Orchestrator,
		"variant", l.Variant, "offered_rps", experiment.FormatRate(l.OfferedRPS), "rep", strconv.Itoa(l.Rep),
	}
	if l.Users > 0 {
		pairs = append(pairs, "users", strconv.Itoa(l.Users))
	}
	for i := 0; i < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		writeLabel(&b, pairs[i], pairs[i+1])
	}
	return b.String()
}

// labelEscaper applies the exposition format's escapes for label values.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func writeLabel(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(`="`)
	b.WriteString(labelEscaper.Replace(value))
	b.WriteByte('"')
}

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
