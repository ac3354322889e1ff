package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// injectLater injects the step's fault once the load has run for warm-up
// plus Fault.After, and reports what it did.
func (r *Runner) injectLater(ctx context.Context, o orchestrator.Orchestrator, app *orchestrator.Deployment, st experiment.Step, started <-chan struct{}) <-chan results.FaultRecord {
	out := make(chan results.FaultRecord, 1)
	service := st.Fault.Service
	if service == "" {
		service = app.App.Service
	}
	go func() {
		rec := results.FaultRecord{Kind: st.Fault.Kind, Service: service}
		select {
		case <-started:
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(st.Warmup + st.Fault.After):
		case <-ctx.Done():
			return
		}
		rec.At = time.Now().UTC()
		hit, err := o.InjectFault(ctx, app, orchestrator.Fault{Kind: st.Fault.Kind, Service: service})
		rec.Hit = hit
		if err != nil {
			rec.Error = err.Error()
		}
		out <- rec
	}()
	return out
}

// FaultGate accepts an injected fault only inside the measured window
// [from, to]: one in the warm-up was healed before anything was measured,
// one after the window measured nothing of it, and either way the step did
// not measure the fault it declares. A zero window (no load result) cannot
// place it.
func FaultGate(f results.FaultRecord, from, to time.Time) results.Gate {
	g := results.Gate{Name: GateFault}
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
