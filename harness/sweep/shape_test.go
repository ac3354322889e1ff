package sweep

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// sizedOrch reports a control plane of a fixed size.
type sizedOrch struct {
	fakeOrch
	servers int
}

func (o *sizedOrch) ControlPlaneServers(context.Context) (int, error) { return o.servers, nil }

func shapePlan() []experiment.Step {
	return []experiment.Step{
		{ID: "on-1", Orchestrator: "nomad", HA: experiment.HAOn, HAAt: "ha.hcl:9"},
		{ID: "off-1", Orchestrator: "nomad", HA: experiment.HAOff, HAAt: "ha.hcl:30"},
		{ID: "on-2", Orchestrator: "nomad", HA: experiment.HAOn, HAAt: "ha.hcl:9"},
		{ID: "off-2", Orchestrator: "nomad", HA: experiment.HAOff, HAAt: "ha.hcl:30"},
	}
}

// A spec of both shapes runs the steps of the shape that runs and leaves
// the others for --resume on the other shape, naming their spec line; the
// running shape's steps are never left out.
func TestOtherShapesStepsAreLeftForResume(t *testing.T) {
	var out bytes.Buffer
	r := &Runner{Cluster: fakeShape(3), Out: &out, Orchestrators: map[string]orchestrator.Orchestrator{"nomad": &sizedOrch{servers: 3}}}
	rec := &results.SweepRecord{ID: "ha-1", Plan: shapePlan()}
	deferred, err := r.deferOtherShape(context.Background(), rec, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if len(deferred) != 2 || !deferred["off-1"] || !deferred["off-2"] {
		t.Errorf("left for the other shape: %v, want off-1 and off-2", deferred)
	}
	for _, w := range []string{"2 steps need ha = \"off\" at ha.hcl:30", "orchbench sweep --resume ha-1", "(step off-1 needs ha = \"off\" (1 server) at ha.hcl:30, but nomad runs 3 servers", "servers=1"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the note lacks %q:\n%s", w, out.String())
		}
	}

	// once the on steps are done, the rest all need the other shape: refused, naming the line
	_, err = r.deferOtherShape(context.Background(), rec, map[string]bool{"on-1": true, "on-2": true})
	if err == nil || !strings.Contains(err.Error(), "step off-1 needs ha = \"off\" (1 server) at ha.hcl:30") {
		t.Errorf("nothing left for the running shape: %v", err)
	}

	// on the other shape the off steps run and the on ones wait
	r.Orchestrators["nomad"] = &sizedOrch{servers: 1}
	deferred, err = r.deferOtherShape(context.Background(), rec, map[string]bool{})
	if err != nil || len(deferred) != 2 || !deferred["on-1"] {
		t.Errorf("on 1 server: %v, %v", deferred, err)
	}

	// steps without ha run on whatever runs
	rec.Plan = []experiment.Step{{ID: "any", Orchestrator: "nomad"}}
	if deferred, err := r.deferOtherShape(context.Background(), rec, map[string]bool{}); err != nil || len(deferred) != 0 {
		t.Errorf("no ha: %v, %v", deferred, err)
	}
}
