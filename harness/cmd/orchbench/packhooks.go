package main

import (
	"context"
	"fmt"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/hooks"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// `pack run` runs a pack's hooks as a sweep's deployment does: prepare
// before deploying, and once healthy, setup on a fresh deployment and
// verification, so a deployment it reports ready holds its dataset. It
// keeps no completion marker: a sweep's own checks decide about reuse.

// runPrepareHooks runs each job's prepare hook on this host.
func runPrepareHooks(ctx context.Context, hr hooks.Runner, jobs []*api.Job) error {
	calls, err := hooks.PrepareCalls(jobs)
	if err != nil {
		return err
	}
	for _, call := range calls {
		if _, err := hr.Run(ctx, call); err != nil {
			return fmt.Errorf("job %s: %w", call.Job, err)
		}
	}
	return nil
}

// runSetupAndVerify runs setup on each freshly deployed job that declares
// it, then every declared verification, against the first instance of the
// job's measured service.
func runSetupAndVerify(ctx context.Context, hr hooks.Runner, o orchestrator.Orchestrator, deployed []*orchestrator.Deployment) error {
	for _, d := range deployed {
		app := d.App
		if !app.Measured() || (app.Setup.Args == nil && app.Verify.Args == nil) {
			continue
		}
		eps, err := o.Endpoints(ctx, d, app.Service)
		if err != nil {
			return fmt.Errorf("no endpoint of %s for the hooks: %w", app.Service, err)
		}
		var calls []hooks.Call
		if app.Setup.Args != nil && d.Fresh {
			calls = append(calls, hooks.At(hooks.Setup, d.Job, app.Setup, eps[0]))
		}
		if app.Verify.Args != nil {
			calls = append(calls, hooks.At(hooks.Verify, d.Job, app.Verify, eps[0]))
		}
		for _, call := range calls {
			if _, err := hr.Run(ctx, call); err != nil {
				return fmt.Errorf("job %s: %w", d.Job, err)
			}
		}
	}
	return nil
}
