package sweep

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// scaleWatch samples an autoscaled group's instance count every second
// while a scaling step's load runs.
type scaleWatch struct {
	o      orchestrator.Autoscaled
	dep    *orchestrator.Deployment
	policy contract.Autoscale
	began  time.Time
	stop   chan struct{}
	done   sync.WaitGroup

	mu     sync.Mutex
	states []orchestrator.ScaleState
	errs   int
	err    error
}

// scalingStep is what a scaling step needs before its load: the
// orchestrator's autoscaling side and the policy the pack rendered; a gate
// that fails when either is missing.
func scalingStep(o orchestrator.Orchestrator, app *orchestrator.Deployment, st experiment.Step) (orchestrator.Autoscaled, results.Gate) {
	g := results.Gate{Name: gates.Scaling}
	as, ok := o.(orchestrator.Autoscaled)
	switch {
	case !ok:
		g.Detail = fmt.Sprintf("%s cannot run an autoscaling policy in this build", o.Name())
	case app.App.Autoscale == nil:
		g.Detail = fmt.Sprintf("the step declares autoscale, but job %s has no autoscaling policy: pack %s does not render the autoscale variable as a scaling block", app.Job, st.Pack)
	default:
		g.Passed = true
	}
	return as, g
}

func startScaleWatch(ctx context.Context, o orchestrator.Autoscaled, dep *orchestrator.Deployment, policy contract.Autoscale) *scaleWatch {
	w := &scaleWatch{o: o, dep: dep, policy: policy, began: time.Now(), stop: make(chan struct{})}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			w.sample(ctx)
			select {
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *scaleWatch) sample(ctx context.Context) {
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := w.o.ScaleState(c, w.dep, w.policy)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errs++
		w.err = err
		return
	}
	w.states = append(w.states, s)
}

// finish stops the sampling (one last sample first) and gathers the
// events and the metric's samples over the measured load.
// The load's seconds are added by the step once it has them.
func (w *scaleWatch) finish(ctx context.Context, scaler string, settle, stepUp time.Duration, start, end time.Time) gates.ScalingEvidence {
	close(w.stop)
	w.done.Wait()
	w.sample(ctx)
	ev := gates.ScalingEvidence{Scaler: scaler, Policy: w.policy, Settle: settle, StepUp: stepUp, Start: start,
		States: w.states, SampleErrors: w.errs, SampleErr: w.err}
	if start.IsZero() {
		start = w.began
	}
	if end.IsZero() {
		end = time.Now()
	}
	ev.Events, ev.EventsErr = w.o.ScaleEvents(ctx, w.dep, w.policy, w.began)
	ev.Metric, ev.MetricErr = w.o.MetricSamples(ctx, w.dep, w.policy, start, end)
	return ev
}
