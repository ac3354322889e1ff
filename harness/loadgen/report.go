package loadgen

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// ReportOptions select the optional sections of the wrk2 text report.
type ReportOptions struct {
	Latency            bool // -L: percentile lines and the detailed spectrum
	UncorrectedLatency bool // -U: the same for uncorrected latency
	Extended           bool // add orchbench's sections (endpoints, status codes, warm-up) after wrk2's
}

// WriteText writes res in wrk2's report layout, so people and parsers used
// to wrk2 read it unchanged. The orchbench-only sections come after
// "Transfer/sec" and only when opts.Extended is set.
func WriteText(w io.Writer, res *Result, opts ReportOptions) error {
	var b strings.Builder
	cfg := res.Config
	fmt.Fprintf(&b, "Running %s test @ %s\n", formatRunTime(cfg.DurationSeconds), cfg.URL)
	fmt.Fprintf(&b, "  %d threads and %d connections\n", cfg.Threads, cfg.Connections)
	if res.Warmup != nil {
		fmt.Fprintf(&b, "  Warm-up: %s, %d requests, %.2f req/s, p99 %s (not included below)\n",
			formatRunTime(res.Warmup.DurationSeconds), res.Warmup.Requests, res.Warmup.AchievedRate, strings.TrimSpace(formatTimeUs(float64(res.Warmup.P99))))
	}
	b.WriteString("  Thread Stats   Avg      Stdev     Max   +/- Stdev\n")
	lat := res.Latency
	fmt.Fprintf(&b, "    %-10s%s%s%s%8.2f%%\n", "Latency",
		units(formatTimeUs(lat.Mean), 8), units(formatTimeUs(lat.StdDev), 10), units(formatTimeUs(float64(lat.Max)), 9),
		withinStdev(lat))
	rm, rs, rx, rw := perThreadRates(res)
	fmt.Fprintf(&b, "    %-10s%s%s%s%8.2f%%\n", "Req/Sec",
		units(formatMetric(rm), 8), units(formatMetric(rs), 10), units(formatMetric(rx), 9), rw)
	if opts.Latency {
		writeLatency(&b, lat, "Recorded Latency")
		b.WriteString("----------------------------------------------------------\n")
	}
	if opts.UncorrectedLatency {
		b.WriteString("\n")
		writeLatency(&b, res.UncorrectedLatency, "Uncorrected Latency (measured without taking delayed starts into account)")
		b.WriteString("----------------------------------------------------------\n")
	}
	fmt.Fprintf(&b, "  %d requests in %s, %sB read\n", res.Requests, formatTimeUs(res.DurationSeconds*1e6), formatBinary(float64(res.Bytes)))
	e := res.Errors
	if e.Connect+e.Read+e.Write+e.Timeout > 0 {
		fmt.Fprintf(&b, "  Socket errors: connect %d, read %d, write %d, timeout %d\n", e.Connect, e.Read, e.Write, e.Timeout)
	}
	if e.Status > 0 {
		fmt.Fprintf(&b, "  Non-2xx or 3xx responses: %d\n", e.Status)
	}
	if res.Tool != "wrk2" {
		// Indented like wrk's own detail lines, which wrk2 parsers skip.
		fmt.Fprintf(&b, "  Accounting: %s\n", res.Accounting)
		fmt.Fprintf(&b, "  Generator: %s\n", res.Generator)
	}
	if res.Interrupted {
		b.WriteString("  Interrupted: the run was stopped early; these figures are partial\n")
	}
	fmt.Fprintf(&b, "Requests/sec: %9.2f\n", res.AchievedRate)
	transfer := 0.0
	if res.DurationSeconds > 0 {
		transfer = float64(res.Bytes) / res.DurationSeconds
	}
	fmt.Fprintf(&b, "Transfer/sec: %10sB\n", formatBinary(transfer))
	if opts.Extended {
		writeExtended(&b, res)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeLatency(b *strings.Builder, l LatencySummary, title string) {
	fmt.Fprintf(b, "  Latency Distribution (HdrHistogram - %s)\n", title)
	for _, p := range l.Percentiles {
		fmt.Fprintf(b, "%7.3f%%%s\n", p.Percentile, units(formatTimeUs(float64(p.Value)), 10))
	}
	b.WriteString("\n  Detailed Percentile spectrum:\n")
	fmt.Fprintf(b, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	for _, s := range l.Spectrum {
		inv := 1 / (1 - s.Percentile)
		if math.IsInf(inv, 1) || s.Percentile >= 1 {
			fmt.Fprintf(b, "%12.3f %12f %12d %12s\n", s.Value/1000, s.Percentile, s.TotalCount, "inf")
			continue
		}
		fmt.Fprintf(b, "%12.3f %12f %12d %12.2f\n", s.Value/1000, s.Percentile, s.TotalCount, inv)
	}
	fmt.Fprintf(b, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", l.Mean/1000, l.StdDev/1000)
	fmt.Fprintf(b, "#[Max     = %12.3f, Total count    = %12d]\n", float64(l.Max)/1000, l.Count)
	fmt.Fprintf(b, "#[Buckets = %12d, SubBuckets     = %12d]\n", l.Buckets, l.SubBuckets)
}

func writeExtended(b *strings.Builder, res *Result) {
	b.WriteString("----------------------------------------------------------\n")
	b.WriteString("orchbench extras\n")
	if res.OfferedRate > 0 {
		fmt.Fprintf(b, "  Offered rate: %.2f req/s, achieved %.2f req/s (%.1f%%)\n", res.OfferedRate, res.AchievedRate, 100*res.AchievedRate/res.OfferedRate)
	}
	if len(res.StatusCodes) > 0 {
		b.WriteString("  Status codes:")
		for _, code := range sortedCodes(res.StatusCodes) {
			fmt.Fprintf(b, " %d=%d", code, res.StatusCodes[code])
		}
		b.WriteString("\n")
	}
	if len(res.Errors.Classes) > 0 {
		b.WriteString("  Error classes:")
		for _, name := range errClassNames {
			if n := res.Errors.Classes[name]; n > 0 {
				fmt.Fprintf(b, " %s=%d", name, n)
			}
		}
		b.WriteString("\n")
	}
	rb := res.ResponseBytes
	fmt.Fprintf(b, "  Response bytes: mean %.1f, min %d, max %d\n", rb.Mean, rb.Min, rb.Max)
	if len(res.Peers) > 0 {
		b.WriteString("  Peers (connections by the address the sockets reached):\n")
		for _, p := range res.Peers {
			fmt.Fprintf(b, "    %-45s %8d\n", p.Addr, p.Connections)
		}
	}
	if len(res.Endpoints) > 0 {
		fmt.Fprintf(b, "  %-40s %10s %8s %10s %10s %10s\n", "Endpoint", "Count", "Errors", "p50", "p99", "Max")
		for _, e := range res.Endpoints {
			p50, p99 := percentileOf(e.Latency, 50), percentileOf(e.Latency, 99)
			fmt.Fprintf(b, "  %-40s %10d %8d %10s %10s %10s\n", e.Label, e.Count, e.Errors,
				strings.TrimSpace(formatTimeUs(float64(p50))), strings.TrimSpace(formatTimeUs(float64(p99))), strings.TrimSpace(formatTimeUs(float64(e.Latency.Max))))
		}
	}
}

func percentileOf(l LatencySummary, p float64) int64 {
	for _, x := range l.Percentiles {
		if x.Percentile == p {
			return x.Value
		}
	}
	return 0
}

// withinStdev approximates wrk's "+/- Stdev" column (share of samples
// within one standard deviation of the mean) from the spectrum.
func withinStdev(l LatencySummary) float64 {
	if l.Count == 0 || len(l.Spectrum) == 0 {
		return 0
	}
	lo, hi := l.Mean-l.StdDev, l.Mean+l.StdDev
	var below, upto int64
	for _, s := range l.Spectrum {
		if s.Value < lo {
			below = s.TotalCount
		}
		if s.Value <= hi {
			upto = s.TotalCount
		}
	}
	return 100 * float64(upto-below) / float64(l.Count)
}

// perThreadRates derives wrk's Req/Sec row (per-thread request rate) from
// the per-second series of the measured period.
func perThreadRates(res *Result) (mean, stdev, max, within float64) {
	var xs []float64
	threads := float64(max1(res.Config.Threads))
	for _, p := range res.Series {
		if !p.Warmup && p.Seconds >= 0.5 {
			xs = append(xs, p.AchievedRate/threads)
		}
	}
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	for _, x := range xs {
		mean += x
		max = math.Max(max, x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		stdev += (x - mean) * (x - mean)
	}
	if len(xs) > 1 {
		stdev = math.Sqrt(stdev / float64(len(xs)-1))
	}
	n := 0
	for _, x := range xs {
		if math.Abs(x-mean) <= stdev {
			n++
		}
	}
	return mean, stdev, max, 100 * float64(n) / float64(len(xs))
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// units right-aligns a formatted value the way wrk's print_units does: unit
// suffixes eat into the two-character padding.
func units(s string, width int) string {
	pad := 2
	if n := len(s); n > 0 && isAlpha(s[n-1]) {
		pad--
	}
	if n := len(s); n > 1 && isAlpha(s[n-2]) {
		pad--
	}
	return fmt.Sprintf("%*s%s", width-pad, s, strings.Repeat(" ", pad))
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// formatTimeUs is wrk's format_time_us: us, ms, s, m.
func formatTimeUs(us float64) string {
	if us >= 1e6 {
		s := us / 1e6
		if s >= 60*0.85 {
			return fmt.Sprintf("%.2fm", s/60)
		}
		return fmt.Sprintf("%.2fs", s)
	}
	if us >= 1000*0.85 {
		return fmt.Sprintf("%.2fms", us/1000)
	}
	return fmt.Sprintf("%.2fus", us)
}

// formatMetric is wrk's format_metric: plain, k, M, G.
func formatMetric(n float64) string {
	unit := ""
	for _, u := range []string{"k", "M", "G"} {
		if n < 1000*0.85 {
			break
		}
		n /= 1000
		unit = u
	}
	return fmt.Sprintf("%.2f%s", n, unit)
}

// formatBinary is wrk's format_binary: plain, K, M, G, T (base 1024).
func formatBinary(n float64) string {
	unit := ""
	for _, u := range []string{"K", "M", "G", "T"} {
		if n < 1024*0.85 {
			break
		}
		n /= 1024
		unit = u
	}
	return fmt.Sprintf("%.2f%s", n, unit)
}

// formatRunTime prints the "Running 10s test" duration like wrk does.
func formatRunTime(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second)).Round(time.Millisecond)
	switch {
	case d%time.Hour == 0 && d > 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0 && d > 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
