package sweep

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/hooks"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// A pack prepares and checks its data with two hooks in job meta, each a
// JSON list of orchbench arguments in which "{{endpoint}}" becomes the first
// instance's host:port of orchbench_service:
//
//   - orchbench_setup_args (bounded by orchbench_setup_timeout, default 30m)
//     loads the dataset; it must be safe to run again on a loaded deployment.
//   - orchbench_verify_args (orchbench_verify_timeout, default 5m) checks it,
//     printing each problem on a line starting "problem:".

// What a step's metadata["dataset"] says about setup and verification.
const (
	SetupNone    = "none declared"
	SetupRan     = "ran"
	SetupFailed  = "failed"
	SetupMarker  = "skipped: completion marker present"
	SetupEarlier = "skipped: finished earlier in this sweep"

	VerifyNone    = "none declared"
	VerifyPassed  = "passed"
	VerifyFailed  = "failed"
	VerifyEarlier = "skipped: passed earlier in this sweep and no task has restarted since"
)

// datasetState is what this process knows of a deployment's dataset.
type datasetState struct {
	// fresh is set by deploy when Nomad registered a new job version: its
	// stores may be empty whatever a marker says.
	fresh bool
	// reload asks for setup before the next step: verification failed.
	reload bool
	// remake asks for the deployment to be made again: verification failed
	// and there is no setup hook to load the data again, because it comes
	// with the deployment (the stores' snapshot images).
	remake bool
	// setUp: setup finished, or its marker was found, in this process.
	setUp bool
	// verifiedOn is the allocation fingerprint verification last passed on.
	verifiedOn string
}

// datasetRecord is archived as the step's metadata["dataset"].
type datasetRecord struct {
	Setup          string    `json:"setup"`
	Marker         string    `json:"marker,omitempty"`
	MarkerFinished time.Time `json:"marker_finished,omitzero"`
	SetupSeconds   float64   `json:"setup_seconds,omitempty"`
	Verification   string    `json:"verification"`
	VerifySeconds  float64   `json:"verification_seconds,omitempty"`
	// Problems are the verification's problem lines (the first few).
	Problems []hooks.Problem `json:"problems,omitempty"`
	// Notes say what went wrong around the hooks without failing the step,
	// e.g. a marker Consul would not store.
	Notes []string `json:"notes,omitempty"`
}

// prepare makes sure the deployment's dataset is in place before a step
// measures it, and returns the dataset gate. Setup runs on a fresh
// deployment; on a reused one it runs unless its completion marker is in
// Consul, since a process that crashed during a load leaves a running job
// with half a dataset and no marker. Verification runs before the first step
// of the deployment in this process, after every setup, and whenever a task
// has restarted or an allocation been replaced since it last passed (a
// restarted Redis is an empty one). When verification fails the step is
// invalid, the marker goes, and setup runs again before the next step.
func (r *Runner) prepare(ctx context.Context, dep *deployment, sr *results.StepResult) results.Gate {
	rec := &datasetRecord{Setup: SetupNone, Verification: VerifyNone}
	sr.Metadata["dataset"] = rec
	fail := func(format string, args ...any) results.Gate {
		return results.Gate{Name: gates.Dataset, Detail: fmt.Sprintf(format, args...)}
	}
	app := dep.app.App
	setupArgs, verifyArgs := app.Setup.Args, app.Verify.Args
	if setupArgs == nil && verifyArgs == nil {
		return results.Gate{Name: gates.Dataset, NotChecked: true, Detail: "the pack declares no setup hook and no verification"}
	}
	eps, err := dep.orch.Endpoints(ctx, dep.app, app.Service)
	if err != nil {
		return fail("no endpoint for the hooks: %v", err)
	}
	state := &dep.dataset
	var passed []string

	if setupArgs != nil {
		defs, err := r.definitions(ctx, dep)
		if err != nil {
			return fail("setup marker: %v", err)
		}
		key := markerKey(defs[0], defs[1:], setupArgs)
		rec.Marker = key
		run := true
		switch {
		case state.fresh || state.reload:
		case state.setUp:
			run, rec.Setup = false, SetupEarlier
		default:
			m, err := r.readMarker(ctx, dep, key)
			switch {
			case err != nil:
				rec.Notes = append(rec.Notes, "marker unreadable, so setup runs: "+err.Error())
			case m != nil:
				run, rec.Setup, rec.MarkerFinished = false, SetupMarker, m.Finished
			}
		}
		if run {
			if err := r.setup(ctx, dep, defs[0], key, setupArgs, eps[0], rec); err != nil {
				rec.Setup = SetupFailed
				return fail("%v", err)
			}
			state.fresh, state.reload, state.verifiedOn = false, false, ""
			rec.Setup = SetupRan
			passed = append(passed, fmt.Sprintf("setup finished in %.0f s", rec.SetupSeconds))
		} else {
			passed = append(passed, "setup "+rec.Setup)
		}
		state.setUp = true
	}

	if verifyArgs != nil {
		fingerprint := r.instanceFingerprint(ctx, dep)
		if state.verifiedOn != "" && state.verifiedOn == fingerprint {
			rec.Verification = VerifyEarlier
			passed = append(passed, "verification "+VerifyEarlier)
		} else {
			res, err := r.runHook(ctx, hooks.At(hooks.Verify, dep.app.Job, app.Verify, eps[0]), &rec.VerifySeconds)
			if err != nil {
				if ctx.Err() != nil {
					// interrupted, not refuted: the step is not archived and the marker stays
					return fail("verification interrupted: %v", ctx.Err())
				}
				rec.Verification = VerifyFailed
				return r.refuted(ctx, dep, rec, setupArgs != nil, res, err)
			}
			state.verifiedOn = fingerprint
			rec.Verification = VerifyPassed
			passed = append(passed, "verification passed: "+res.Last)
		}
	}
	return results.Gate{Name: gates.Dataset, Passed: true, Detail: strings.Join(passed, "; ")}
}

// refuted handles a failed verification: the dataset is not what the
// deployment claims, so nothing may be measured on it and it must be
// loaded again before the next step.
func (r *Runner) refuted(ctx context.Context, dep *deployment, rec *datasetRecord, hasSetup bool, res hooks.Result, runErr error) results.Gate {
	rec.Problems = res.Problems[:min(len(res.Problems), 10)]
	// the failure's message quotes the first problem lines
	detail := runErr.Error()
	state := &dep.dataset
	state.verifiedOn = ""
	if hasSetup {
		// reload does not depend on the marker's deletion: Consul may refuse it
		state.setUp, state.reload = false, true
		if err := r.clearMarkers(ctx, dep, dep.app.Job); err != nil {
			rec.Notes = append(rec.Notes, "marker not deleted: "+err.Error())
			detail += "; the setup marker could not be deleted (" + err.Error() + ")"
		} else {
			detail += "; the setup marker is deleted"
		}
		detail += " and setup runs again before the next step on this deployment"
	} else {
		state.remake = true
	}
	return results.Gate{Name: gates.Dataset, Detail: detail}
}

// setup runs the setup hook with no marker in place for the job, and writes
// the marker once the hook has succeeded: an interrupted or failed run
// leaves none, so the next process runs it again.
func (r *Runner) setup(ctx context.Context, dep *deployment, app jobDefinition, key string, args []string, ep orchestrator.Endpoint, rec *datasetRecord) error {
	if err := r.clearMarkers(ctx, dep, app.ID); err != nil {
		// a marker left standing could vouch for the half-done load
		return fmt.Errorf("setup not started: the old marker could not be deleted: %w", err)
	}
	if _, err := r.runHook(ctx, hooks.At(hooks.Setup, dep.app.Job, dep.app.App.Setup, ep), &rec.SetupSeconds); err != nil {
		return err
	}
	m := orchestrator.SetupMarker{Orchestrator: app.Orchestrator, Job: app.ID, Version: app.Version, Revision: app.Revision, Args: args, Finished: time.Now().UTC(), Seconds: rec.SetupSeconds}
	if err := r.writeMarker(ctx, dep, key, m); err != nil {
		// the dataset is loaded; only a later process will load it again
		rec.Notes = append(rec.Notes, "marker not written: "+err.Error())
		fmt.Fprintf(r.Out, "setup of %s: marker not written (%v); a later sweep will run setup again\n", dep.app.Job, err)
	}
	return nil
}

// runHook runs a hook, adds its time to *seconds and keeps it out of the
// ETA: a dataset load's minutes say nothing about how long a step takes.
func (r *Runner) runHook(ctx context.Context, call hooks.Call, seconds *float64) (hooks.Result, error) {
	run := hooks.Runner{Binary: r.Orchbench, Out: r.Out}
	if _, emulated := r.cluster().(*nodes.Emulated); emulated && call.Kind == hooks.Prepare {
		// a prepare hook builds images (dataset snapshots) where the
		// harness's machine builds them, the project's dockerd, which
		// pushes them to the nodes' registry: not on the Swarm manager the
		// sweep's DOCKER_HOST names
		run.Env = nodes.ProjectDockerEnviron(os.Environ())
	}
	res, err := run.Run(ctx, call)
	r.setupSpent += res.Took
	*seconds += res.Took.Seconds()
	return res, err
}

// instanceFingerprint names the deployment's running instances and their
// task restarts; it changes when a task restarts or an instance is
// replaced, either of which can take in-memory data with it. An error gives
// a fingerprint of its own, so verification runs again rather than trusting.
func (r *Runner) instanceFingerprint(ctx context.Context, dep *deployment) string {
	var parts []string
	for _, d := range dep.jobs {
		instances, err := dep.orch.Instances(ctx, d)
		if err != nil {
			return "error: " + err.Error()
		}
		for _, in := range instances {
			parts = append(parts, fmt.Sprintf("%s/%s:%d", in.ID, in.Task, in.Restarts))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
