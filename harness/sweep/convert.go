package sweep

import (
	"strconv"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// measurement copies what the load generator measured into a step result.
// The archive keeps milliseconds and percent; loadgen counts microseconds and
// fractions.
func measurement(r *results.StepResult, res *loadgen.Result) {
	a := res.Accounting
	r.Accounting = &a
	r.AchievedRPS = res.AchievedRate
	r.DueRPS = res.DueRate // Accounting.Due over the measured period
	// unsent requests are the backlog: they show in achieved < due, not as errors
	r.Requests = a.Completed + a.Errors + a.Timeouts
	r.Errors = a.Errors + a.Timeouts
	r.Bytes = res.Bytes
	r.Corrected = latency(res.Latency)
	r.Uncorrected = latency(res.UncorrectedLatency)
	r.Spectrum = spectrum(res.Latency)
	r.UncorrectedSpectrum = spectrum(res.UncorrectedLatency)
	r.StatusCodes = map[string]int64{}
	for code, n := range res.StatusCodes {
		r.StatusCodes[strconv.Itoa(code)] = n
	}
	r.ErrorClasses = map[string]int64{}
	for class, n := range res.Errors.Classes {
		r.ErrorClasses[class] = n
	}
	for _, e := range res.Endpoints {
		r.Endpoints = append(r.Endpoints, results.EndpointStats{
			Name: e.Label, Requests: e.Count, Errors: e.Errors, Bytes: e.Bytes, Completed: e.Completed, BodyBytes: e.BodyBytes, BodySquares: e.BodySquares, Latency: latency(e.Latency),
		})
	}
	for _, p := range res.Series {
		// warm-up is reported apart; a sliver of an interval at the very end
		// would read as a drop to zero on the dashboards
		if p.Warmup || p.Seconds < 0.1 {
			continue
		}
		r.Series = append(r.Series, results.Second{
			T: p.T, Offered: p.OfferedRate, Achieved: p.AchievedRate, Errors: p.Errors,
			P50Ms: us(p.P50), P99Ms: us(p.P99),
		})
	}
	r.Start, r.End = res.Start, res.End
}

func us(v int64) float64 { return float64(v) / 1000 }

func latency(l loadgen.LatencySummary) results.Latency {
	out := results.Latency{Max: us(l.Max), Mean: l.Mean / 1000}
	for _, p := range l.Percentiles {
		v := us(p.Value)
		switch p.Percentile {
		case 50:
			out.P50 = v
		case 75:
			out.P75 = v
		case 90:
			out.P90 = v
		case 99:
			out.P99 = v
		case 99.9:
			out.P999 = v
		}
	}
	return out
}

func spectrum(l loadgen.LatencySummary) []results.SpectrumPoint {
	out := make([]results.SpectrumPoint, 0, len(l.Spectrum))
	for _, p := range l.Spectrum {
		out = append(out, results.SpectrumPoint{Percentile: p.Percentile * 100, ValueMs: p.Value / 1000})
	}
	return out
}
