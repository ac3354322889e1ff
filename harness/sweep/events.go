package sweep

import (
	"context"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// collectEvents lists the task events of every job of the deployment since
// the load began.
func collectEvents(ctx context.Context, dep *deployment, since time.Time) ([]orchestrator.TaskEvent, error) {
	var all []orchestrator.TaskEvent
	for _, d := range dep.jobs {
		events, err := dep.orch.TaskEvents(ctx, d, since)
		if err != nil {
			return nil, err
		}
		all = append(all, events...)
	}
	orchestrator.SortEvents(all)
	return all, nil
}
