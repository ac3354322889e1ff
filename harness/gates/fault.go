package gates

import (
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// FaultGate accepts an injected fault only inside the measured window
// [from, to]: one in the warm-up was healed before anything was measured,
// one after the window measured nothing of it, and either way the step did
// not measure the fault it declares. A zero window (no load result) cannot
// place it.
func FaultGate(f results.FaultRecord, from, to time.Time) results.Gate {
	g := results.Gate{Name: Fault}
	what := fmt.Sprintf("%s on %s", f.Kind, f.Service)
	switch {
	case f.Error != "":
		g.Detail = f.Error
	case from.IsZero() || to.IsZero():
		g.NotChecked = true
		g.Detail = what + " was injected, but the load left no measured window to place it in"
	case f.At.Before(from):
		g.Detail = fmt.Sprintf("%s was injected %.1f s before the measured window began (in the warm-up), at %s; the window ran %s to %s",
			what, from.Sub(f.At).Seconds(), clock(f.At), clock(from), clock(to))
	case f.At.After(to):
		g.Detail = fmt.Sprintf("%s was injected %.1f s into a measured window of %.1f s, after it ended, at %s; the window ran %s to %s",
			what, f.At.Sub(from).Seconds(), to.Sub(from).Seconds(), clock(f.At), clock(from), clock(to))
	default:
		g.Passed = true
		g.Detail = fmt.Sprintf("%s at %.1f s into the measurement of %.1f s", what, f.At.Sub(from).Seconds(), to.Sub(from).Seconds())
	}
	return g
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }
