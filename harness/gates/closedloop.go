package gates

import (
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// DefaultMaxClosedLoopLagShare bounds, in a closed loop, the share of each
// user's cycle the generator held the user back, for the throughput. There
// no schedule is missed and the latency ends at the response's arrival, so
// a late send costs throughput first: a user completes one request per
// response time + think + lag. Past this share the generator, not the
// application, may have capped the throughput the step reports. A fixed
// lag bound would refuse a 500 ms service for a 6 ms hiccup that cost it
// 1 %, and pass a 1 ms one that lost a fifth of its rate.
const DefaultMaxClosedLoopLagShare = 0.05

// MaxClosedLoopLatencyLagShare bounds the same share for the latency,
// whatever the service used. A user the generator holds back is missing
// from the service's queue, so at a saturated service the latency falls
// with the lag: by Little's law the declared users' latency is the
// reported one plus the mean lag, and the report understates it by the
// lag share (exactly so without think time; with think time the share
// understates it, but a service with a queue then has a latency large
// beside a generator's lag).
//
// Measured on this machine (2 cores shared with four other jobs) with
// `bench-loadgen closed-lag`: 16 users, a one-worker server holding each
// request 1 ms (~750-880 rps, ~20 ms mean latency, all queue), the
// generator at GOMAXPROCS=1 beside a goroutine spinning part of every 2 ms
// or 20 ms; 42 runs of 3-4 s. Lag shares 0.1 % to 26.9 %. The reported
// mean fell short of the 16 users' queue at the achieved rate (16 ÷ rps)
// by the lag share to within 1 point in every run (at 10.7 %: -10.6 %;
// 13.9 %: -14.0 %; 26.9 %: -27.1 %). The reported p99 stayed within
// -3.0 % to +5.3 % of the server's own p99 for the same window in 41 runs
// (one +28 %): latency ends at the kernel's receive stamp, so the
// generator's lag no longer adds to it (ended at the read, as before, it
// exceeded the server's by +1.6 % to +15.3 % in 6 runs at shares of
// 0.7 % to 17.9 %). The p99 against the unstarved
// runs' could set no bound: unstarved runs alone spread from -32 % to
// +26 %. So the error of the reported latency is the lag share, and a
// 10 % error is where the share reaches 10 %.
const MaxClosedLoopLatencyLagShare = 0.10

// SaturatedShare is the share of its CPU quota a service must have used
// for the step to count as limited by the service: with its quota spent
// the whole window, a slower generator left it no idle time to lose.
const SaturatedShare = 0.95

// ClosedLoopGeneratorGate is GeneratorGate for closed loops and iterations
// (users that wait for each response). It judges the generator's lag as a
// share of each user's cycle (the mean lag over the mean cycle). Past
// MaxClosedLoopLatencyLagShare the step is invalid whatever the service
// used: its latency is distorted. Past maxShare (for the throughput) it is
// invalid unless the service was saturated: then the service set the pace
// however late the generator sent, as when a container's network path
// takes CPU from a generator on the same cores.
func ClosedLoopGeneratorGate(res *loadgen.Result, think time.Duration, maxShare float64, svc ServiceUse) results.Gate {
	g := results.Gate{Name: Generator}
	gen := res.Generator
	if gen.LagSamples == 0 || res.UncorrectedLatency.Count == 0 {
		g.NotChecked = true
		g.Detail = "no request completed in the measured window, so the generator's share of a cycle is unknown"
		return g
	}
	lag := time.Duration(gen.LagMeanUs * float64(time.Microsecond))
	cycle := lag + time.Duration(res.UncorrectedLatency.Mean*float64(time.Microsecond)) + think
	share := float64(lag) / float64(cycle)
	desc := fmt.Sprintf("the generator held each user back %.1f %% of its cycle (mean send lag %s of %s; p99 %s, max %s over %d sends); %.2f cores",
		100*share, roundDuration(lag), roundDuration(cycle),
		time.Duration(gen.LagP99Us)*time.Microsecond, time.Duration(gen.LagMaxUs)*time.Microsecond, gen.LagSamples, gen.CPUCores)
	switch {
	case share > MaxClosedLoopLatencyLagShare:
		g.Detail = fmt.Sprintf("generator saturated: %s, past the %.0f %% bound for the latency: the users it held back were missing from the service's queue, so the latency it reports is distorted, whatever the service used (%s)",
			desc, 100*MaxClosedLoopLatencyLagShare, svc)
	case share <= maxShare:
		g.Passed = true
		g.Detail = desc
	case svc.Saturated(SaturatedShare):
		g.Passed = true
		g.Detail = fmt.Sprintf("%s; %s, so it, not the generator, set the pace (the lag is under the %.0f %% bound for the latency)", desc, svc, 100*MaxClosedLoopLatencyLagShare)
	default:
		g.Detail = fmt.Sprintf("generator saturated: %s (bound %.0f %%), and the service was not saturated: %s", desc, 100*maxShare, svc)
	}
	return g
}

// roundDuration keeps three significant figures of a duration.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 100*time.Microsecond:
		return d.Round(time.Microsecond)
	default:
		return d
	}
}
