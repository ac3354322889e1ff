package sweep

import (
	"math"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// nodeFaultWindows splits the load's measured series at the fault and at
// the recovery: requests and errors before, during and after, which is
// what users of the service saw of it.
func nodeFaultWindows(f *results.FaultRecord, res *loadgen.Result) {
	if res == nil || f.At.IsZero() {
		return
	}
	f.TimeoutsInStep = res.Errors.Timeout
	f.Windows = faultWindows(res.Series, f.Seconds, f.AllHealthySeconds)
}

// faultWindows: at is the injection and recovered the recovery's delay
// after it (nil: not recovered), both in seconds of the measured period.
// An interval belongs to the window its start falls in.
func faultWindows(series []loadgen.SeriesPoint, at float64, recovered *float64) []results.FaultWindow {
	end := 0.0
	for _, p := range series {
		if !p.Warmup {
			end = math.Max(end, p.T+p.Seconds)
		}
	}
	healed := end
	if recovered != nil {
		healed = math.Min(at+*recovered, end)
	}
	ws := []results.FaultWindow{
		{Name: results.WindowBefore, FromSeconds: 0, ToSeconds: math.Min(at, end)},
		{Name: results.WindowDuring, FromSeconds: math.Min(at, end), ToSeconds: healed},
	}
	if recovered != nil {
		ws = append(ws, results.FaultWindow{Name: results.WindowAfter, FromSeconds: healed, ToSeconds: end})
	}
	for _, p := range series {
		if p.Warmup || p.T < 0 {
			continue
		}
		for i := range ws {
			last := i == len(ws)-1
			if p.T >= ws[i].FromSeconds && (p.T < ws[i].ToSeconds || last) {
				ws[i].Requests += int64(math.Round(p.AchievedRate * p.Seconds))
				ws[i].Errors += p.Errors
				break
			}
		}
	}
	return ws
}
