package results

import (
	"strings"
	"testing"
)

// withPolicy gives the step's one limits record a CPU weight, a cpuset and
// a swap allowance, as a step archived now records them.
func withPolicy(s *StepResult, weight int64, swapAccounted bool, swapBytes int64) {
	l := s.Metadata["limits"].([]any)[0].(map[string]any)
	l["cgroup_version"], l["cpu_weight"], l["cpuset_size"] = 1, weight, 2
	l["swap_accounted"], l["swap_limit_bytes"] = swapAccounted, swapBytes
}

func rowOf(t *testing.T, rows []ParityRow, aspect string) ParityRow {
	t.Helper()
	for _, r := range rows {
		if r.Aspect == aspect {
			return r
		}
	}
	t.Fatalf("no %q row in %+v", aspect, rows)
	return ParityRow{}
}

// The same weight, cpuset and swap on both orchestrators: shown, not flagged.
func TestParityPolicyRowShowsWeightCPUSetAndSwap(t *testing.T) {
	steps := paritySteps(func(s *StepResult) { withPolicy(s, 512, true, 0) })
	withPolicy(&steps[0], 512, true, 0)
	row := rowOf(t, Parity(steps), "limits taewa/taewa policy")
	want := "cpu.shares 512, quota spread over 2 CPUs, no swap"
	if row.Mismatch || row.Values["nomad"] != want || row.Values["swarm"] != want {
		t.Errorf("policy row %+v, want %q on both, not flagged", row, want)
	}
}

// Nomad's shares are its MHz and Kubernetes' its millicores: a different
// weight is flagged, and so is swap allowed on one orchestrator only, or
// not known on one.
func TestParityPolicyRowFlagsADifferentWeightOrSwap(t *testing.T) {
	for _, c := range []struct {
		name      string
		weight    int64
		accounted bool
		swap      int64
		swarmSays string
		nomadSays string
	}{
		{"another weight", 256, true, 0, "cpu.shares 256", "cpu.shares 512"},
		{"swap allowed", 512, true, 512 << 20, "swap 512 MiB", "no swap"},
		{"swap unlimited", 512, true, -1, "swap unlimited", "no swap"},
		{"swap not accounted", 512, false, 0, "swap not accounted by the kernel", "no swap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps := paritySteps(func(s *StepResult) { withPolicy(s, c.weight, c.accounted, c.swap) })
			withPolicy(&steps[0], 512, true, 0)
			m := Mismatches(Parity(steps))
			if len(m) != 1 || m[0].Aspect != "limits taewa/taewa policy" {
				t.Fatalf("mismatches %+v, want the policy row alone", m)
			}
			if !strings.Contains(m[0].Values["swarm"], c.swarmSays) || !strings.Contains(m[0].Values["nomad"], c.nomadSays) {
				t.Errorf("values %v, want swarm to say %q and nomad %q", m[0].Values, c.swarmSays, c.nomadSays)
			}
		})
	}
}

// A different instance count of a task is a difference of the limits row.
func TestParityLimitsRowFlagsADifferentInstanceCount(t *testing.T) {
	steps := paritySteps(func(s *StepResult) {
		l := s.Metadata["limits"].([]any)
		s.Metadata["limits"] = append(l, l[0])
	})
	m := Mismatches(Parity(steps))
	if len(m) != 1 || m[0].Aspect != "limits taewa/taewa" || m[0].Values["swarm"] != "0.500 cores, 512 MiB, 2 instances" ||
		m[0].Values["nomad"] != "0.500 cores, 512 MiB, 1 instance" {
		t.Fatalf("mismatches %+v, want the limits row with 1 against 2 instances", m)
	}
}

// With shipping on, the agent ships Nomad's task logs and none of
// Swarm's: the same declaration is different work, and flagged.
func TestParityShippingRowFlagsLogsShippedOnOneOrchestratorOnly(t *testing.T) {
	on := func(jobs ...string) Shipping {
		return Shipping{Mode: "on", Agent: "orchbench-agent", Cores: 0.02, LogsURL: "http://127.0.0.1:9428", Jobs: jobs}
	}
	steps := paritySteps(func(s *StepResult) { s.Metadata["shipping"] = on() })
	steps[0].Metadata["shipping"] = on("taewa-vertical")
	row := rowOf(t, Parity(steps), "log shipping")
	if !row.Mismatch || row.Values["nomad"] != "on: the agent ships the task logs" ||
		row.Values["swarm"] != "on: the agent runs but ships none of these task logs" {
		t.Errorf("shipping row %+v, want flagged: Nomad's logs shipped, Swarm's not", row)
	}
	// shipping off everywhere is the same work
	steps = paritySteps(func(s *StepResult) { s.Metadata["shipping"] = Shipping{Mode: "off"} })
	steps[0].Metadata["shipping"] = map[string]any{"mode": "off"} // as read back from the archive
	if row := rowOf(t, Parity(steps), "log shipping"); row.Mismatch || row.Values["swarm"] != "off" || row.Values["nomad"] != "off" {
		t.Errorf("shipping off on both flagged: %+v", row)
	}
}

// twoTasks gives a step a front end declaring 0.5 cores and a store
// declaring 0.03, with these CPU weights.
func twoTasks(s *StepResult, frontWeight, storeWeight int64) {
	task := func(name string, cores float64, weight int64) map[string]any {
		return map[string]any{"group": name, "task": name, "effective_cores": cores, "quota_cores": cores, "memory_limit_mib": 256,
			"cgroup_version": 1, "cpu_weight": weight, "swap_accounted": true, "swap_limit_bytes": 0,
			"declared": map[string]any{"cores": cores, "memory_mib": 256}}
	}
	s.Metadata["limits"] = []any{task("front", 0.5, frontWeight), task("store", 0.03, storeWeight)}
}

// Nomad weighs a task by its MHz (2596 per core here), Kubernetes and the
// aligned Swarm by millicores (1024 per core): the tasks weigh against
// each other alike, which is what decides a contended node, so the rows
// agree and only the unit is shown (never flagged). Swarm's own default,
// 1024 for every task, gives the store 17 times its declared share
// against the front end: flagged, with the weight it would need at the
// front end's 2048 per core.
func TestParityPolicyComparesWeightsInProportionToDeclaredCores(t *testing.T) {
	nomadSteps := func(swarmFront, swarmStore int64) []StepResult {
		steps := paritySteps(func(s *StepResult) { twoTasks(s, swarmFront, swarmStore) })
		twoTasks(&steps[0], 1298, 78) // 0.5 and 0.03 of a 2596 MHz core
		return steps
	}
	rows := Parity(nomadSteps(512, 30))
	for _, task := range []string{"front", "store"} {
		row := rowOf(t, rows, "limits "+task+"/"+task+" policy")
		want := "cpu.shares in proportion to the declared cores, no swap"
		if row.Mismatch || row.Values["nomad"] != want || row.Values["swarm"] != want {
			t.Errorf("aligned weights: %s row %+v, want %q on both", task, row, want)
		}
	}
	unit := rowOf(t, rows, "cpu weight per declared core")
	if unit.Mismatch || !unit.Inherent || unit.Values["nomad"] != "2596" || unit.Values["swarm"] != "1024" {
		t.Errorf("unit row %+v", unit)
	}

	m := Mismatches(Parity(nomadSteps(1024, 1024)))
	if len(m) != 1 || m[0].Aspect != "limits store/store policy" ||
		m[0].Values["swarm"] != "cpu.shares 1024, not in proportion to its 0.03 declared cores (61 would be), no swap" {
		t.Fatalf("Swarm's default weights: mismatches %+v, want the store's policy row", m)
	}
}

// An uncapped datastore (shares mode) weighs by its reservation: Nomad's
// 78 MHz and the kubelet's 30 for the same 0.03 core are in proportion,
// as the capped front end's are; Swarm's default 1024 is not.
func TestParityPolicyWeighsSharesModeTasksByTheirReservation(t *testing.T) {
	store := func(weight int64) map[string]any {
		return map[string]any{"group": "store", "task": "store", "effective_cores": 2, "quota_cores": 0, "memory_limit_mib": 256,
			"cgroup_version": 1, "cpu_weight": weight, "swap_accounted": true, "swap_limit_bytes": 0,
			"declared": map[string]any{"cores": 0, "memory_mib": 256, "cpu_mode": "shares", "weight_cores": 0.03}}
	}
	steps := func(swarmStore int64) []StepResult {
		s := paritySteps(func(s *StepResult) { twoTasks(s, 512, 30) })
		twoTasks(&s[0], 1298, 78)
		s[0].Metadata["limits"] = append(s[0].Metadata["limits"].([]any)[:1], store(78))
		s[1].Metadata["limits"] = append(s[1].Metadata["limits"].([]any)[:1], store(swarmStore))
		return s
	}
	row := rowOf(t, Parity(steps(30)), "limits store/store policy")
	if row.Mismatch || row.Values["nomad"] != "cpu.shares in proportion to the declared cores, no swap" {
		t.Errorf("aligned shares-mode store: %+v", row)
	}
	if row := rowOf(t, Parity(steps(1024)), "limits store/store policy"); !row.Mismatch || !strings.Contains(row.Values["swarm"], "cpu.shares 1024, not in proportion to its 0.03 declared cores (31 would be)") {
		t.Errorf("Swarm's default weight on the store: %+v", row)
	}
}
