package results

import (
	"strings"
	"testing"
)

// spreadStep is a horizontal step with two instances of the measured
// service (a, b) and a store; cores are the instances' CPU, conns their
// connections as the generator's peers saw them (nil: one entry address in
// front of both, as a Kubernetes NodePort).
func spreadStep(orch string, rep int, coresA, coresB float64, conns []int64) StepResult {
	eps := []any{
		map[string]any{"address": "127.0.0.1", "port": 20001, "instance": orch + "-a"},
		map[string]any{"address": "127.0.0.1", "port": 20002, "instance": orch + "-b"},
	}
	var peers []any
	if conns != nil {
		peers = []any{map[string]any{"addr": "127.0.0.1:20001", "connections": conns[0]}, map[string]any{"addr": "127.0.0.1:20002", "connections": conns[1]}}
	} else {
		eps = append([]any{map[string]any{"address": "127.0.0.1", "port": 30080}}, eps...)
		peers = []any{map[string]any{"addr": "127.0.0.1:30080", "connections": 16}}
	}
	return StepResult{
		Labels:  Labels{App: "taewa", Orchestrator: orch, Variant: "horizontal", OfferedRPS: 200, Rep: rep},
		Outcome: OutcomeValid,
		Metadata: map[string]any{
			"endpoints": eps,
			"peers":     peers,
			"task_cpu": []any{
				map[string]any{"task": "taewa", "alloc_id": orch + "-a", "cores": coresA},
				map[string]any{"task": "taewa", "alloc_id": orch + "-b", "cores": coresB},
				map[string]any{"task": "redis", "alloc_id": orch + "-store", "cores": 0.9},
			},
		},
	}
}

func spreadRow(t *testing.T, steps []StepResult) ParityRow {
	t.Helper()
	return rowOf(t, Parity(steps), "load spread over instances")
}

// Round-robin over two instances on both: shares within noise, not
// flagged; the store's CPU is not an instance's.
func TestParitySpreadEvenOnBothIsNotFlagged(t *testing.T) {
	steps := []StepResult{
		spreadStep("nomad", 1, 0.26, 0.24, []int64{8, 8}), spreadStep("nomad", 2, 0.25, 0.25, []int64{8, 8}),
		spreadStep("swarm", 1, 0.27, 0.25, []int64{8, 8}), spreadStep("swarm", 2, 0.24, 0.26, []int64{8, 8}),
	}
	row := spreadRow(t, steps)
	if row.Mismatch {
		t.Fatalf("even spreads flagged: %+v", row)
	}
	if want := "imbalance 1.02 (median of 2 steps, 1.00–1.04); connections per instance 8+8"; row.Values["nomad"] != want {
		t.Errorf("nomad %q, want %q", row.Values["nomad"], want)
	}
}

// kube-proxy spreads connections at random: 12 of 16 on one pod puts 70 %
// of the CPU there, far beyond round-robin's spread on Nomad, and the row
// says which orchestrator and by how much.
func TestParitySpreadFlagsARandomSpreadBehindANodePort(t *testing.T) {
	steps := []StepResult{
		spreadStep("nomad", 1, 0.26, 0.24, []int64{8, 8}), spreadStep("nomad", 2, 0.25, 0.25, []int64{8, 8}),
		spreadStep("kubernetes", 1, 0.35, 0.15, nil), spreadStep("kubernetes", 2, 0.30, 0.20, nil),
	}
	row := spreadRow(t, steps)
	if !row.Mismatch {
		t.Fatalf("a 70/30 and 60/40 spread against an even one not flagged: %+v", row)
	}
	if want := "imbalance 1.30 (median of 2 steps, 1.20–1.40); connections per instance not seen (one address in front of every instance)"; row.Values["kubernetes"] != want {
		t.Errorf("kubernetes %q, want %q", row.Values["kubernetes"], want)
	}
	if !strings.Contains(row.Values["nomad"], "imbalance 1.02") {
		t.Errorf("nomad %q", row.Values["nomad"])
	}
}

// The noise is the steadiest orchestrator's own range when it exceeds the
// floor: two orchestrators that both vary this much across their own
// repetitions are not told apart by a difference of medians within it.
func TestParitySpreadNoiseIsTheSteadiestOrchestratorsOwnRange(t *testing.T) {
	steps := []StepResult{
		spreadStep("nomad", 1, 0.25, 0.25, []int64{8, 8}), spreadStep("nomad", 2, 0.35, 0.15, []int64{12, 4}),
		spreadStep("swarm", 1, 0.30, 0.20, []int64{10, 6}), spreadStep("swarm", 2, 0.40, 0.10, []int64{13, 3}),
	}
	// medians 1.20 and 1.40: 0.20 apart, beyond the floor but within both
	// orchestrators' own range of 0.40
	if row := spreadRow(t, steps); row.Mismatch {
		t.Errorf("a difference inside the orchestrators' own range flagged: %+v", row)
	}
	// a difference beyond the floor with steady orchestrators is flagged
	steps = []StepResult{spreadStep("nomad", 1, 0.25, 0.25, []int64{8, 8}), spreadStep("swarm", 1, 0.28, 0.22, []int64{9, 7})}
	row := spreadRow(t, steps)
	if !row.Mismatch {
		t.Errorf("imbalance 1.00 against 1.12 (beyond %g) not flagged: %+v", SpreadNoise, row)
	}
}

// A single instance has no spread: no row.
func TestParitySpreadNeedsTwoInstances(t *testing.T) {
	single := func(orch string) StepResult {
		s := spreadStep(orch, 1, 0.25, 0.25, []int64{8, 8})
		s.Metadata["endpoints"] = s.Metadata["endpoints"].([]any)[:1]
		return s
	}
	for _, r := range Parity([]StepResult{single("nomad"), single("swarm")}) {
		if r.Aspect == "load spread over instances" {
			t.Errorf("a spread row for one instance: %+v", r)
		}
	}
}

// A faulted step lost an instance mid-load and a step without the CPU of
// every instance cannot tell: neither gives a spread, so the orchestrator whose steps are
// all such shows none, which is flagged as a row it lacks.
func TestParitySpreadLeavesOutFaultedStepsAndStepsWithoutCPU(t *testing.T) {
	faulted := spreadStep("swarm", 1, 0.5, 0, []int64{16, 0})
	faulted.Metadata["fault"] = map[string]any{"kind": "kill-task"}
	noCPU := spreadStep("swarm", 2, 0, 0, []int64{8, 8})
	delete(noCPU.Metadata, "task_cpu")
	// one instance's cgroup was not sampled: its share is not known, not 0
	halfCPU := spreadStep("swarm", 3, 0.25, 0.25, []int64{8, 8})
	halfCPU.Metadata["task_cpu"] = halfCPU.Metadata["task_cpu"].([]any)[:1]
	row := spreadRow(t, []StepResult{spreadStep("nomad", 1, 0.25, 0.25, []int64{8, 8}), faulted, noCPU, halfCPU})
	if row.Values["swarm"] != "" || !row.Mismatch || !strings.HasPrefix(row.Values["nomad"], "imbalance 1.00") {
		t.Errorf("row %+v: want swarm empty and flagged, nomad even", row)
	}
}
