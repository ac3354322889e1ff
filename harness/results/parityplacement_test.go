package results

import "testing"

// placementSteps are Taewa horizontal, 3 instances, on Nomad and Swarm,
// each instance on the node given.
func placementSteps(nomadNodes, swarmNodes []string) []StepResult {
	step := func(orch string, nodes []string) StepResult {
		var lims []any
		for _, n := range nodes {
			l := map[string]any{"group": "taewa", "task": "taewa", "effective_cores": 0.03, "quota_cores": 0.03, "memory_limit_mib": 31}
			if n != "" {
				l["node"] = n
			}
			lims = append(lims, l)
		}
		return StepResult{
			Labels:   Labels{App: "taewa", Orchestrator: orch, Variant: "horizontal", OfferedRPS: 10, Rep: 1},
			Outcome:  OutcomeValid,
			Metadata: map[string]any{"limits": lims},
		}
	}
	return []StepResult{step("nomad", nomadNodes), step("swarm", swarmNodes)}
}

func placementRow(rows []ParityRow) *ParityRow {
	for i, r := range rows {
		if r.Aspect == "placement taewa/taewa" {
			return &rows[i]
		}
	}
	return nil
}

func TestParityFlagsDifferentPlacements(t *testing.T) {
	spread := []string{"w1", "w2", "w3"}
	rows := Parity(placementSteps(spread, []string{"w1", "w1", "w2"}))
	r := placementRow(rows)
	if r == nil {
		t.Fatalf("no placement row in %+v", rows)
	}
	if !r.Mismatch || r.Values["nomad"] != "on 3 nodes" || r.Values["swarm"] != "on 2 nodes" {
		t.Fatalf("3 nodes on Nomad against 2 on Swarm must be flagged: %+v", *r)
	}
}

func TestParityOfSamePlacementOnOtherNodesFlagsNothing(t *testing.T) {
	// the same count on other nodes is the same experiment: workers are alike
	rows := Parity(placementSteps([]string{"w1", "w1", "w1"}, []string{"w2", "w2", "w2"}))
	r := placementRow(rows)
	if r == nil || r.Mismatch || r.Values["nomad"] != "on 1 node" {
		t.Fatalf("packed on one node on both: %+v", r)
	}
}

func TestParityOfRecordsWithoutNodesHasNoPlacementRow(t *testing.T) {
	// archived before instances carried their node
	if r := placementRow(Parity(placementSteps([]string{"", ""}, []string{"", ""}))); r != nil {
		t.Fatalf("a placement row from records without nodes: %+v", *r)
	}
}
