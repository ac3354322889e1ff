package sweep

import (
	"context"
	"io"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

type stopRecorder struct {
	orchestrator.Orchestrator
	stopped []string
}

func (s *stopRecorder) Stop(_ context.Context, d *orchestrator.Deployment) error {
	s.stopped = append(s.stopped, d.Job)
	return nil
}

// A configuration whose steps are all done is stopped at once, so the next
// one is placed on a node its reservation no longer fills.
func TestFinishedConfigurationIsStopped(t *testing.T) {
	o := &stopRecorder{}
	r := &Runner{Out: io.Discard, Orchestrators: map[string]orchestrator.Orchestrator{"nomad": o},
		deployments: map[string]*deployment{
			"a-nomad-baseline": {orch: o, jobs: []*orchestrator.Deployment{{Job: "a"}}},
		},
		// b first renders a's own job, as an app block reusing a deployment does
		jobIDs: map[string][]string{"b-nomad-baseline": {"a"}},
	}
	ctx := context.Background()
	step := func(id, app string) experiment.Step {
		return experiment.Step{ID: id, App: app, Orchestrator: "nomad", Variant: "baseline"}
	}
	rest := []experiment.Step{step("a2", "a"), step("b1", "b")}
	r.stopFinished(ctx, "a-nomad-baseline", rest, map[string]bool{})
	if len(o.stopped) != 0 {
		t.Fatalf("stopped %v while a2 still needs it", o.stopped)
	}
	// a2 settled in the archive already (a resumed sweep), but b deploys
	// the same job: a spec sharing one deployment between app blocks
	r.stopFinished(ctx, "a-nomad-baseline", rest, map[string]bool{"a2": true})
	if len(o.stopped) != 0 {
		t.Fatalf("stopped %v while b renders the same job", o.stopped)
	}
	// a step further on renders a's job, but b deploys its own in between:
	// kept, a would run beside b (a resumed HA sweep found every worker's
	// memory taken that way)
	r.jobIDs["b-nomad-baseline"] = []string{"b"}
	r.jobIDs["d-nomad-baseline"] = []string{"a"}
	r.stopFinished(ctx, "a-nomad-baseline", append(rest, step("d1", "d")), map[string]bool{"a2": true})
	if len(o.stopped) != 1 || o.stopped[0] != "a" || r.deployments["a-nomad-baseline"] != nil {
		t.Fatalf("stopped %v, deployments %v", o.stopped, r.deployments)
	}
	// deploy = "per-step": the configuration's next repetition redeploys, so
	// keeping this one would only hold its reservation (study 004's five
	// replicas could not be placed beside earlier steps' leftovers)
	r.deployments["c-nomad-baseline"] = &deployment{orch: o, jobs: []*orchestrator.Deployment{{Job: "c"}}}
	again := step("c2", "c")
	again.Redeploy = true
	r.stopFinished(ctx, "c-nomad-baseline", []experiment.Step{again}, map[string]bool{})
	if len(o.stopped) != 2 || o.stopped[1] != "c" {
		t.Fatalf("per-step: stopped %v", o.stopped)
	}
	r.deployments["b-nomad-baseline"] = &deployment{orch: o, jobs: []*orchestrator.Deployment{{Job: "b"}}}
	r.Keep = true
	r.stopFinished(ctx, "b-nomad-baseline", nil, nil)
	if len(o.stopped) != 2 {
		t.Fatalf("--keep: stopped %v", o.stopped)
	}
}
