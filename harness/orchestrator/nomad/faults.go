package nomad

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// InjectFault kills one task instance of a service ("kill-task") or stops one
// of its allocations so Nomad reschedules it ("replace-instance").
func (a *Orchestrator) InjectFault(ctx context.Context, d *orchestrator.Deployment, f orchestrator.Fault) (orchestrator.FaultHit, error) {
	eps, err := a.Endpoints(ctx, d, f.Service)
	if err != nil {
		return orchestrator.FaultHit{}, err
	}
	alloc, _, err := a.Client.Allocations().Info(eps[0].Instance, qo(ctx))
	if err != nil {
		return orchestrator.FaultHit{}, fmt.Errorf("nomad: alloc %s: %w", eps[0].Instance, err)
	}
	hit := orchestrator.FaultHit{Instance: alloc.ID, Group: alloc.TaskGroup}
	switch f.Kind {
	case orchestrator.FaultKillTask:
		for task := range alloc.TaskStates {
			if err := a.Client.Allocations().Signal(alloc, qo(ctx), task, "SIGKILL"); err != nil {
				return hit, fmt.Errorf("nomad: kill task %s of alloc %s: %w", task, orchestrator.ShortID(alloc.ID), err)
			}
		}
	case orchestrator.FaultReplaceInstance:
		if _, err := a.Client.Allocations().Stop(alloc, qo(ctx)); err != nil {
			return hit, fmt.Errorf("nomad: stop alloc %s: %w", orchestrator.ShortID(alloc.ID), err)
		}
	default:
		return hit, fmt.Errorf("nomad: unknown fault %q (valid: %s)", f.Kind, orchestrator.FaultKindList())
	}
	return hit, nil
}
