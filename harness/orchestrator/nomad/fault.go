package nomad

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// InjectFault kills one task instance of a service ("kill-task") or stops one
// of its allocations so Nomad reschedules it ("stop-alloc").
func (a *Adapter) InjectFault(ctx context.Context, d *orchestrator.Deployment, f orchestrator.Fault) error {
	eps, err := a.Endpoints(ctx, d, f.Service)
	if err != nil {
		return err
	}
	alloc, _, err := a.Client.Allocations().Info(eps[0].Instance, qo(ctx))
	if err != nil {
		return fmt.Errorf("nomad: alloc %s: %w", eps[0].Instance, err)
	}
	switch f.Kind {
	case orchestrator.FaultKillTask:
		for task := range alloc.TaskStates {
			if err := a.Client.Allocations().Signal(alloc, qo(ctx), task, "SIGKILL"); err != nil {
				return fmt.Errorf("nomad: kill task %s of alloc %s: %w", task, orchestrator.ShortID(alloc.ID), err)
			}
		}
	case orchestrator.FaultReplaceInstance:
		if _, err := a.Client.Allocations().Stop(alloc, qo(ctx)); err != nil {
			return fmt.Errorf("nomad: stop alloc %s: %w", orchestrator.ShortID(alloc.ID), err)
		}
	default:
		return fmt.Errorf("nomad: unknown fault %q (valid: %s)", f.Kind, orchestrator.FaultKindList())
	}
	return nil
}
