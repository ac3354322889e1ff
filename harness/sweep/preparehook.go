package sweep

import (
	"context"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/hooks"
	"github.com/orchbench/orchbench/harness/results"
)

// prepareRecord is archived as the step's metadata["prepare"].
type prepareRecord struct {
	Job     string   `json:"job"`
	Args    []string `json:"args"`
	Seconds float64  `json:"seconds"`
}

// runPrepareHooks runs each job's orchbench_prepare_args on this host
// before the job is deployed: what it makes (a dataset snapshot's images)
// must exist before any task starts. The hook must be idempotent and cheap
// when there is nothing to do, since it runs before every deployment, and
// its time stays out of the ETA like a setup's.
func (r *Runner) runPrepareHooks(ctx context.Context, jobs []*api.Job, sr *results.StepResult) error {
	calls, err := hooks.PrepareCalls(jobs)
	if err != nil {
		return err
	}
	var recs []prepareRecord
	for _, call := range calls {
		rec := prepareRecord{Job: call.Job, Args: call.Args}
		_, err := r.runHook(ctx, call, &rec.Seconds)
		recs = append(recs, rec)
		// recorded before a failure returns, so the failed step says what ran
		sr.Metadata["prepare"] = recs
		if err != nil {
			return err
		}
	}
	return nil
}
