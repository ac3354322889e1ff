package sweep

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/orchestrator"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/placement"
	"github.com/orchbench/orchbench/harness/testutil"
)

// A step's placement never reaches the pack (which declares no such
// variable and would refuse it), and the jobs it renders to carry the
// placement's constraints and the registry's images.
func TestRenderAppliesPlacementAndRegistry(t *testing.T) {
	var rendered *pack.Rendered
	r := &Runner{Out: io.Discard, PacksDir: filepath.Join(testutil.RepoRoot(t), "packs"), Registry: imageref.Registry("10.77.0.10:5000"),
		Parse: func(p *pack.Rendered) ([]*api.Job, error) {
			rendered = p
			return []*api.Job{tt.Taewa()}, nil
		}}
	st := experiment.Step{ID: "taewa-nomad-baseline-r1-rep1", Pack: "taewa", Orchestrator: "nomad", Variant: "baseline",
		Vars: map[string]any{"variant": "baseline", "mhz_per_core": 2100.0, placement.Variable: "spread"}}
	var o orchestrator.Orchestrator // mhz_per_core is set: the capacity is never asked
	jobs, err := r.render(context.Background(), st, o)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rendered.Files[rendered.JobFiles()[0]], "placement") {
		t.Error("the pack saw the placement variable")
	}
	g := jobs[0].TaskGroups[0]
	var spread bool
	for _, c := range g.Constraints {
		spread = spread || c.Operand == api.ConstraintDistinctHosts
	}
	if !spread || jobs[0].Meta[placement.MetaKey] != "spread" {
		t.Errorf("placement spread not applied: constraints %+v, meta %v", g.Constraints, jobs[0].Meta)
	}
	if img := g.Tasks[0].Config["image"]; img != "10.77.0.10:5000/orchbench/taewa:local" {
		t.Errorf("image %v, want the registry's", img)
	}
	st.Vars[placement.Variable] = "everywhere"
	if _, err := r.render(context.Background(), st, o); err == nil || !strings.Contains(err.Error(), st.ID) {
		t.Errorf("an unknown placement: want an error naming the step, got %v", err)
	}
}
