package loadgen

import (
	"fmt"
	"runtime"
	"time"
)

// result assembles the Result once every connection has stopped.
func (r *run) result(finished time.Time, series []SeriesPoint) *Result {
	cfg := r.cfg
	meas, warm := newRecorder(cfg.MaxEndpoints*len(r.threads)), newRecorder(cfg.MaxEndpoints*len(r.threads))
	for _, t := range r.threads {
		meas.merge(t.meas)
		warm.merge(t.warm)
	}
	res := &Result{Schema: ResultSchema, Tool: "orchbench-loadgen", Config: cfg.echo(), Start: r.meas, Series: series}
	res.Config.Engine, res.Config.Procs = r.engine, runtime.GOMAXPROCS(0)
	// A cancellation that came after the generator stopped cut nothing.
	res.Interrupted = r.stop.Load() && r.stopAt.Before(finished)
	// An interrupted run's window closed at the interruption: its period
	// and rates are those of the part that ran.
	end := r.end
	if cfg.Closed != nil && finished.Before(end) {
		end = finished // stopped by a count
	}
	if res.Interrupted && r.stopAt.Before(end) {
		end = r.stopAt
	}
	if end.Before(r.meas) {
		end = r.meas
	}
	res.End = end
	res.DurationSeconds = end.Sub(r.meas).Seconds()
	res.WallSeconds = max(0, finished.Sub(r.meas).Seconds())
	meas.fill(res)
	res.Accounting = meas.accounting()
	for _, c := range r.all {
		res.Accounting.Due += c.tally.due
		res.Accounting.Unsent += c.tally.unsent
	}
	res.Generator = r.generatorStats(meas)
	res.Peers = mergePeers(r.all)
	if res.DurationSeconds > 0 {
		res.AchievedRate = float64(res.Requests) / res.DurationSeconds
		if r.sched != nil {
			res.OfferedRate = (r.sched.Hits(end.Sub(r.start)) - r.sched.Hits(cfg.Warmup)) / res.DurationSeconds
			res.DueRate = float64(res.Accounting.Due) / res.DurationSeconds
		}
	}
	if cfg.Warmup > 0 {
		w := &WarmupSummary{DurationSeconds: cfg.Warmup.Seconds(), Requests: warm.requests, Errors: warm.errorCounts()}
		w.AchievedRate = float64(warm.requests) / cfg.Warmup.Seconds()
		if r.sched != nil {
			w.OfferedRate = r.sched.Hits(cfg.Warmup) / cfg.Warmup.Seconds()
		}
		if warm.corrected.TotalCount() > 0 {
			w.P50, w.P99, w.Max = warm.corrected.ValueAtPercentile(50), warm.corrected.ValueAtPercentile(99), warm.corrected.Max()
		}
		w.Endpoints = warm.bodies(func(e *endpointRec) EndpointBodies {
			return EndpointBodies{Completed: e.completed, BodyBytes: e.bodyBytes, BodySquares: e.bodySquares}
		})
		res.Warmup = w
	}
	return res
}

// String is a one-line summary for logs.
func (res *Result) String() string {
	p99 := int64(0)
	for _, p := range res.Latency.Percentiles {
		if p.Percentile == 99 {
			p99 = p.Value
		}
	}
	return fmt.Sprintf("%d requests in %.2fs, %.1f req/s (offered %.1f), p99 %dus, errors %d",
		res.Requests, res.DurationSeconds, res.AchievedRate, res.OfferedRate, p99, res.Errors.Total())
}
