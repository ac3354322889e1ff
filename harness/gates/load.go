package gates

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// The checks of a step's load run. Each one can fail, and each names what
// it saw; tests in load_test.go make every one of them fail.

// DefaultMaxGeneratorLag bounds the generator's own send delay (p99): past
// it the generator, not the application, set the pace.
const DefaultMaxGeneratorLag = 5 * time.Millisecond

// minLagSamples is the fewest sends whose p99 is more than their maximum:
// below it one scheduling hiccup would decide the step.
const minLagSamples = 100

// CompleteGate accepts a load run only when the generator ran its whole
// schedule: it exited cleanly, was not interrupted, accounted for every
// request due, and measured for the planned duration.
func CompleteGate(res *loadgen.Result, runErr error, planned time.Duration, runner string) results.Gate {
	g := results.Gate{Name: Load}
	switch {
	case runErr != nil:
		g.Detail = runErr.Error()
	case res == nil:
		g.Detail = "the load generator left no result"
	case res.Interrupted:
		g.Detail = fmt.Sprintf("the load generator was interrupted after %.1f s of %.1f s", res.WallSeconds, planned.Seconds())
	case res.DurationSeconds+0.001 < planned.Seconds():
		g.Detail = fmt.Sprintf("measured %.1f s of the planned %.1f s", res.DurationSeconds, planned.Seconds())
	case res.WallSeconds+0.001 < res.DurationSeconds:
		g.Detail = fmt.Sprintf("the generator ran %.1f s, shorter than its %.1f s window", res.WallSeconds, res.DurationSeconds)
	case !res.Accounting.Balanced():
		g.Detail = "requests unaccounted for: " + res.Accounting.String()
	default:
		g.Passed = true
		g.Detail = fmt.Sprintf("%.1f s by the %s load runner; %s", res.WallSeconds, runner, res.Accounting)
	}
	return g
}

// LagBound is the open-loop generator's send-lag bound (p99) and where it
// came from, for the gate's detail.
type LagBound struct {
	Max    time.Duration
	Source string
}

// sloLagShare is the share of the SLO's p99 the generator's own lag may
// take: a lag near the SLO would decide a step at the SLO's edge.
const sloLagShare = 0.10

// GeneratorLagBound is the spec's max_generator_lag when it sets one, else
// the smaller of DefaultMaxGeneratorLag and a tenth of the SLO's p99.
func GeneratorLagBound(declared time.Duration, slo experiment.SLO) LagBound {
	if declared > 0 {
		return LagBound{Max: declared, Source: "max_generator_lag in the spec"}
	}
	if slo.P99Ms <= 0 {
		return LagBound{Max: DefaultMaxGeneratorLag, Source: "the default; the SLO has no p99 rule"}
	}
	share := time.Duration(sloLagShare * slo.P99Ms * float64(time.Millisecond))
	if share < DefaultMaxGeneratorLag {
		return LagBound{Max: share, Source: fmt.Sprintf("%.0f %% of the SLO's p99 of %g ms", 100*sloLagShare, slo.P99Ms)}
	}
	return LagBound{Max: DefaultMaxGeneratorLag, Source: fmt.Sprintf("the default, under %.0f %% of the SLO's p99 of %g ms", 100*sloLagShare, slo.P99Ms)}
}

// GeneratorGate marks a step invalid when the generator was too busy to
// send on time: then its own queue, not the application, shaped the
// latency. wrk2 cannot tell this apart; the lag measurement can.
func GeneratorGate(res *loadgen.Result, bound LagBound) results.Gate {
	g := results.Gate{Name: Generator}
	gen := res.Generator
	if gen.LagSamples < minLagSamples {
		g.NotChecked = true
		g.Detail = fmt.Sprintf("%d sends in the measured window, fewer than the %d a p99 of the send lag needs (max %s)",
			gen.LagSamples, minLagSamples, time.Duration(gen.LagMaxUs)*time.Microsecond)
		return g
	}
	p99 := time.Duration(gen.LagP99Us) * time.Microsecond
	desc := fmt.Sprintf("send lag p99 %s, max %s over %d sends; %.2f cores", p99, time.Duration(gen.LagMaxUs)*time.Microsecond, gen.LagSamples, gen.CPUCores)
	limit := fmt.Sprintf("bound %s: %s", bound.Max, bound.Source)
	if p99 > bound.Max {
		g.Detail = fmt.Sprintf("generator saturated: %s (%s)", desc, limit)
		return g
	}
	g.Passed = true
	g.Detail = fmt.Sprintf("%s (%s)", desc, limit)
	return g
}

// SLOGate applies the sweep's SLO to the step alone: its failure means the
// application failed under this load, a measurement (broken).
func SLOGate(sr results.StepResult, slo experiment.SLO) results.Gate {
	_, details := results.Violations(sr, slo)
	if len(details) > 0 {
		return results.Gate{Name: SLO, Breaks: true, Detail: strings.Join(details, "; ")}
	}
	if sr.DueRPS <= 0 && sr.OfferedRPS <= 0 {
		// a closed loop offers no rate of its own: only latency and errors judge it
		return results.Gate{Name: SLO, Breaks: true, Passed: true, Detail: fmt.Sprintf("closed loop, no offered rate (throughput not judged): p99 %.1f ms, achieved %.1f rps, error ratio %.4f", sr.Corrected.P99, sr.AchievedRPS, sr.ErrorRatio())}
	}
	return results.Gate{Name: SLO, Breaks: true, Passed: true, Detail: fmt.Sprintf("p99 %.1f ms, achieved %.1f of %.1f rps due, error ratio %.4f", sr.Corrected.P99, sr.AchievedRPS, sr.DueRPS, sr.ErrorRatio())}
}
