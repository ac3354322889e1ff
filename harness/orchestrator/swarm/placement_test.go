package swarm

import (
	"reflect"
	"testing"

	"github.com/hashicorp/nomad/api"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
	"github.com/orchbench/orchbench/harness/placement"
)

// The harness's placements become Swarm placements: max_replicas_per_node
// for spread, node label constraints that a node without the label (the
// single-node swarm) passes.
func TestSpecPlacement(t *testing.T) {
	cases := []struct {
		mode placement.Mode
		max  uint64
		cons []string
	}{
		{placement.Scheduler, 0, []string{"node.labels.orchbench.role!=client"}},
		{placement.Spread, 1, []string{"node.labels.orchbench.role!=client"}},
		{placement.Packed, 0, []string{"node.labels.orchbench.role!=client", "node.labels.orchbench.frontend!=false"}},
	}
	for _, c := range cases {
		j := tt.Taewa()
		j.TaskGroups[0].Count = tt.Ptr(3)
		if err := placement.Apply([]*api.Job{j}, c.mode); err != nil {
			t.Fatal(err)
		}
		pl := spec(t, mustTranslate(t, j, Options{MHzPerCore: 2100}), "taewa-vertical-taewa").TaskTemplate.Placement
		if pl == nil || pl.MaxReplicas != c.max || !reflect.DeepEqual(pl.Constraints, c.cons) {
			t.Errorf("%s: placement %+v, want max %d constraints %q", c.mode, pl, c.max, c.cons)
		}
	}
}
