package vmpush

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

// Exposition renders a step as Prometheus text with millisecond timestamps:
// summary series at the step's end, per-second series at Start + t seconds.
// The metric names and labels are documented in docs/metrics.md.
func Exposition(r results.StepResult) []byte {
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
	for _, o := range []results.Outcome{results.OutcomeValid, results.OutcomeBroken, results.OutcomeInvalid} {
		w.sample("orchbench_step_outcome", []string{"outcome", string(o)}, boolValue(r.Outcome == o), end)
	}
	w.sample("orchbench_step_duration_seconds", nil, r.End.Sub(r.Start).Seconds(), end)
	if s, ok := results.ShippingOf(r); ok && !s.Undeclared {
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
func (w *expoWriter) latency(name string, extra []string, l results.Latency, ts int64) {
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

func baseLabels(l results.Labels) string {
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
