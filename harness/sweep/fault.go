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
