package loadgen

import "time"

// collectSeries closes an interval every SeriesInterval, aligned on the run
// start, until done is closed; the last, partial interval is kept too.
func (r *run) collectSeries(done <-chan struct{}) []SeriesPoint {
	step := r.cfg.SeriesInterval
	merged := newLatencyHist()
	var out []SeriesPoint
	from := r.start
	timer := time.NewTimer(time.Until(from.Add(step)))
	defer timer.Stop()
	for {
		last := false
		to := from.Add(step)
		select {
		case <-timer.C:
		case <-done:
			last = true
			to = time.Now()
		}
		p := SeriesPoint{T: from.Sub(r.meas).Seconds(), Seconds: to.Sub(from).Seconds(), Warmup: from.Before(r.meas)}
		var completed int64
		for _, t := range r.threads {
			t.mu.Lock()
			completed += t.iv.completed
			p.Errors += t.iv.errors
			p.Bytes += t.iv.bytes
			merged.Merge(t.iv.hist)
			t.iv.hist.Reset()
			t.iv.completed, t.iv.errors, t.iv.bytes = 0, 0, 0
			t.mu.Unlock()
		}
		if p.Seconds > 0 {
			p.AchievedRate = float64(completed) / p.Seconds
			if r.sched != nil {
				p.OfferedRate = (r.sched.Hits(to.Sub(r.start)) - r.sched.Hits(from.Sub(r.start))) / p.Seconds
			}
		}
		if merged.TotalCount() > 0 {
			p.P50, p.P99 = merged.ValueAtPercentile(50), merged.ValueAtPercentile(99)
		}
		merged.Reset()
		if p.Seconds > 0.001 || completed > 0 || p.Errors > 0 {
			out = append(out, p)
		}
		if last {
			return out
		}
		from = to
		timer.Reset(time.Until(from.Add(step)))
	}
}
