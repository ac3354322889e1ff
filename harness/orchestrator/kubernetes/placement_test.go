package kubernetes

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/orchestrator"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
	"github.com/orchbench/orchbench/harness/placement"
	corev1 "k8s.io/api/core/v1"
)

// The harness's placements become pod affinities: a required anti-affinity
// on the hostname for spread, required NotIn node affinities (which a node
// without the label passes) for the client node and the front end's worker.
func TestPodPlacement(t *testing.T) {
	for _, mode := range placement.Modes {
		j := tt.Taewa()
		if err := placement.Apply([]*api.Job{j}, mode); err != nil {
			t.Fatal(err)
		}
		w, err := orchestrator.NewWorkload(j)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Translate(w, 2100)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := build(plan)
		if err != nil {
			t.Fatal(err)
		}
		spec := objs.Deployments[0].Spec.Template.Spec
		if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil {
			t.Fatalf("%s: no node affinity: %+v", mode, spec.Affinity)
		}
		notIn := map[string]string{}
		for _, term := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if e.Operator != corev1.NodeSelectorOpNotIn || len(e.Values) != 1 {
					t.Errorf("%s: expression %+v", mode, e)
				}
				notIn[e.Key] = e.Values[0]
			}
		}
		if notIn[placement.NodeRole] != "client" {
			t.Errorf("%s: not kept off the client node: %v", mode, notIn)
		}
		if _, pinned := notIn[placement.NodeFrontend]; pinned != (mode == placement.Packed) {
			t.Errorf("%s: front end's worker constraint %v", mode, notIn)
		}
		if spread := spec.Affinity.PodAntiAffinity != nil; spread != (mode == placement.Spread) {
			t.Errorf("%s: pod anti-affinity %+v", mode, spec.Affinity.PodAntiAffinity)
		}
	}
}
