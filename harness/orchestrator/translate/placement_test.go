package translate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
	"github.com/orchbench/orchbench/harness/placement"
)

var (
	offClient  = NodeLabel{Key: placement.NodeRole, Value: "client"}
	onFrontend = NodeLabel{Key: placement.NodeFrontend, Value: "false"}
)

// Every placement the harness applies translates: one instance per node
// for spread, the front end's worker for packed and for the front end of
// a job with back ends, never the client node.
func TestTranslatePlacementModes(t *testing.T) {
	cases := []struct {
		mode placement.Mode
		job  func() *api.Job
		// want per group
		want map[string]Placement
	}{
		{placement.Scheduler, tt.Taewa, map[string]Placement{"taewa": {NotOn: []NodeLabel{offClient}}}},
		{placement.Spread, tt.Taewa, map[string]Placement{"taewa": {MaxPerNode: 1, NotOn: []NodeLabel{offClient}}}},
		{placement.Packed, tt.Taewa, map[string]Placement{"taewa": {NotOn: []NodeLabel{offClient, onFrontend}}}},
		{placement.Spread, tt.SocialNetwork, map[string]Placement{
			"frontend": {NotOn: []NodeLabel{offClient, onFrontend}},
			"user":     {MaxPerNode: 1, NotOn: []NodeLabel{offClient}},
			"redis":    {MaxPerNode: 1, NotOn: []NodeLabel{offClient}},
		}},
		{placement.Packed, tt.SocialNetwork, map[string]Placement{
			"frontend": {NotOn: []NodeLabel{offClient, onFrontend}},
			"ferretdb": {NotOn: []NodeLabel{offClient, onFrontend}},
		}},
		{placement.Scheduler, tt.SocialNetwork, map[string]Placement{
			"frontend":  {NotOn: []NodeLabel{offClient, onFrontend}},
			"memcached": {NotOn: []NodeLabel{offClient}},
		}},
	}
	for _, c := range cases {
		j := c.job()
		if err := placement.Apply([]*api.Job{j}, c.mode); err != nil {
			t.Fatal(err)
		}
		p := mustTranslate(t, j, opts(2100))
		for group, want := range c.want {
			var got *Placement
			for _, s := range p.Services {
				if s.Group == group {
					got = &s.Placement
				}
			}
			if got == nil {
				t.Fatalf("%s, %s: no service of group %s", *j.ID, c.mode, group)
			}
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("%s, %s, group %s: placement %+v, want %+v", *j.ID, c.mode, group, *got, want)
			}
		}
	}
}

// A node meta constraint the orchestrators cannot all express (an
// equality, which Swarm's and Kubernetes' label matching would refuse on
// a node without the label, where Nomad's != passes) is refused by name.
func TestTranslateRefusesOtherNodeMetaConstraints(t *testing.T) {
	j := tt.Taewa()
	j.TaskGroups[0].Constraints = []*api.Constraint{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1"}}
	_, err := Translate(j, opts(2100))
	if err == nil || !strings.Contains(err.Error(), `constraint "${meta.rack} = r1" is not supported`) {
		t.Fatalf("an equality on node meta: %v", err)
	}
	j = tt.Taewa()
	j.TaskGroups[0].Constraints = []*api.Constraint{{LTarget: "${attr.unique.hostname}", Operand: "!=", RTarget: "n1"}}
	if _, err := Translate(j, opts(2100)); err == nil || !strings.Contains(err.Error(), "is not supported") {
		t.Fatalf("!= on an attribute that is not node meta: %v", err)
	}
}
