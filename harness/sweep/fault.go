package sweep

import (
	"context"
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
		// the step ends with the load's end and its cool-down: what a node
		// fault causes is watched until then
		end := time.Now().Add(st.Warmup + st.Duration + st.Cooldown)
		select {
		case <-time.After(st.Warmup + st.Fault.After):
		case <-ctx.Done():
			return
		}
		if st.Fault.Kind.NodeLevel() {
			r.injectNode(ctx, o, app, *st.Fault, &rec, end)
			out <- rec
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

// faultWait bounds the wait for a fault's record once the load has ended:
// an instance fault has been injected by then or never will be; a node
// fault is watched through the cool-down and may still be bringing its
// node back: the node's runtime, a leader (up to a minute), the
// deployment whole again (wholeBound).
func faultWait(st experiment.Step) time.Duration {
	if st.Fault != nil && st.Fault.Kind.NodeLevel() {
		return st.Cooldown + st.Fault.Duration + 2*time.Minute + wholeBound
	}
	return 5 * time.Second
}
