package sweep

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/contract"
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
	var recs []prepareRecord
	for _, job := range jobs {
		app, err := contract.ParseApp(job)
		if err != nil {
			return err
		}
		if app.Prepare.Args == nil {
			continue
		}
		rec := prepareRecord{Job: app.Job, Args: app.Prepare.Args}
		out, err := r.runHook(ctx, "prepare", app.Job, "", app.Prepare.Args, app.Prepare.Timeout, &rec.Seconds)
		recs = append(recs, rec)
		sr.Metadata["prepare"] = recs
		if err != nil {
			return fmt.Errorf("prepare hook (orchbench %s) failed after %.0f s: %v: %s", strings.Join(app.Prepare.Args, " "), rec.Seconds, err, out.last)
		}
	}
	return nil
}
