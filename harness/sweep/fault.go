package sweep

import (
	"context"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// faultRecord is what happened when a fault was injected during load.
type faultRecord struct {
	Kind    orchestrator.FaultKind `json:"kind"`
	Service string                 `json:"service"`
	At      time.Time              `json:"at"`
	// Seconds is the injection time from the start of the measured period.
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
	// Hit is the instance the fault acted on; its events are the fault's.
	Hit orchestrator.FaultHit `json:"hit"`
	// RecoverySeconds runs from the injection to the next start of a task
	// of the hit group (restarted in place or replaced); nil when none
	// started before the step ended.
	RecoverySeconds *float64 `json:"recovery_seconds,omitempty"`
}

// injectLater injects the step's fault once the load has run for warm-up
// plus Fault.After, and reports what it did.
func (r *Runner) injectLater(ctx context.Context, o orchestrator.Orchestrator, app *orchestrator.Deployment, st experiment.Step, started <-chan struct{}) <-chan faultRecord {
	out := make(chan faultRecord, 1)
	service := st.Fault.Service
	if service == "" {
		service = app.App.Service
	}
	go func() {
		rec := faultRecord{Kind: st.Fault.Kind, Service: service}
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
