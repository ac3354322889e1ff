package results

import (
	"strings"
	"testing"
)

// paritySteps are Taewa vertical on two orchestrators as they would be
// archived, with limits, entry, facts and response sizes; tweak changes
// the swarm step before it is returned.
func paritySteps(tweak func(swarm *StepResult)) []StepResult {
	step := func(orch string, limitCores float64, bodyBytes int64) StepResult {
		return StepResult{
			Labels:    Labels{App: "taewa", Orchestrator: orch, Variant: "vertical", OfferedRPS: 100, Rep: 1},
			Outcome:   OutcomeValid,
			Endpoints: []EndpointStats{{Name: "GET /?n=20000", Requests: 1000, Completed: 1000, BodyBytes: bodyBytes * 1000}},
			Metadata: map[string]any{
				"entry":       "host-port",
				"load_runner": orch,
				"limits": []any{map[string]any{"group": "taewa", "task": "taewa", "effective_cores": limitCores, "quota_cores": limitCores,
					"memory_limit_mib": 512, "image_id": "sha256:b5a0811f8a04aa5eaca26ac91ab776fd"}},
				"nodes": map[string]any{"vm": map[string]any{"kernel.version": "6.1.0", orch + ".version": "1"}},
			},
		}
	}
	nomad, swarm := step("nomad", 0.5, 44), step("swarm", 0.5, 44)
	if tweak != nil {
		tweak(&swarm)
	}
	// a baseline run on Nomad only has nothing to compare
	alone := step("nomad", 0.25, 44)
	alone.Variant = "baseline"
	return []StepResult{nomad, swarm, alone}
}

func TestParityOfEqualRunsFlagsNothing(t *testing.T) {
	rows := Parity(paritySteps(nil))
	if len(rows) == 0 {
		t.Fatal("no parity rows for a variant run on two orchestrators")
	}
	for _, r := range rows {
		if r.Variant != "vertical" {
			t.Errorf("row for %s, which ran on one orchestrator only: %+v", r.Variant, r)
		}
	}
	if m := Mismatches(rows); len(m) != 0 {
		t.Fatalf("equal runs flagged: %+v", m)
	}
	want := map[string]string{"limits taewa/taewa": "0.500 cores, 512 MiB, 1 instance", "entry": "host-port", "image taewa/taewa": "b5a0811f8a04",
		"mean response body GET /?n=20000": "44 bytes", "node kernel.version": "6.1.0"}
	for _, r := range rows {
		if w, ok := want[r.Aspect]; ok {
			if r.Values["nomad"] != w || r.Values["swarm"] != w {
				t.Errorf("%s: %v, want %q on both", r.Aspect, r.Values, w)
			}
			delete(want, r.Aspect)
		}
		if r.Aspect == "load job" && (!r.Inherent || r.Mismatch) {
			t.Errorf("the load job differs by nature and must not be flagged: %+v", r)
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
}

// Every kind of difference other than the orchestrator is flagged.
func TestParityFlagsEveryDifference(t *testing.T) {
	for _, c := range []struct {
		name, aspect string
		tweak        func(*StepResult)
	}{
		{"a different CPU limit", "limits taewa/taewa", func(s *StepResult) {
			s.Metadata["limits"].([]any)[0].(map[string]any)["quota_cores"] = 1.0
		}},
		{"another image", "image taewa/taewa", func(s *StepResult) {
			s.Metadata["limits"].([]any)[0].(map[string]any)["image_id"] = "sha256:0000aaaa"
		}},
		{"another entry kind", "entry", func(s *StepResult) { s.Metadata["entry"] = "node-port" }},
		{"empty bodies", "mean response body GET /?n=20000", func(s *StepResult) { s.Endpoints[0].BodyBytes = 0 }},
		{"bodies 10 % smaller", "mean response body GET /?n=20000", func(s *StepResult) { s.Endpoints[0].BodyBytes = 40 * 1000 }},
		{"another kernel", "node kernel.version", func(s *StepResult) {
			s.Metadata["nodes"] = map[string]any{"vm": map[string]any{"kernel.version": "5.10"}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := Mismatches(Parity(paritySteps(c.tweak)))
			if len(m) != 1 || m[0].Aspect != c.aspect {
				t.Fatalf("mismatches %+v, want exactly %q", m, c.aspect)
			}
		})
	}
	// an invalid step measured nothing and cannot break parity
	rows := Parity(paritySteps(func(s *StepResult) { s.Outcome, s.Metadata["entry"] = OutcomeInvalid, "node-port" }))
	for _, r := range rows {
		if r.Mismatch || strings.Contains(r.Values["swarm"], "node-port") {
			t.Errorf("an invalid step entered parity: %+v", r)
		}
	}
}

// An overloaded step completes a different subset of its requests on each
// run, so a stateful app's reads differ in size there; response sizes are
// compared over the steps valid on both, and only there.
func TestParityComparesResponseSizesOverStepsValidEverywhere(t *testing.T) {
	overloaded := func(orch string, body int64) StepResult {
		return StepResult{
			Labels:    Labels{App: "taewa", Orchestrator: orch, Variant: "vertical", OfferedRPS: 400, Rep: 1},
			Outcome:   OutcomeBroken,
			Endpoints: []EndpointStats{{Name: "GET /?n=20000", Requests: 900, Completed: 300, BodyBytes: body * 300}},
		}
	}
	sizeRow := func(rows []ParityRow) ParityRow {
		for _, r := range rows {
			if r.Aspect == "mean response body GET /?n=20000" {
				return r
			}
		}
		t.Fatalf("no response size row in %+v", rows)
		return ParityRow{}
	}
	steps := append(paritySteps(nil), overloaded("nomad", 60), overloaded("swarm", 20))
	row := sizeRow(Parity(steps))
	if row.Mismatch || row.Values["swarm"] != "44 bytes" || !strings.Contains(row.Basis, "1 steps valid on every orchestrator") {
		t.Errorf("the broken step entered the comparison: %+v", row)
	}
	// the same difference in a step valid on both is flagged
	steps = paritySteps(func(s *StepResult) { s.Endpoints[0].BodyBytes = 20 * 1000 })
	if row := sizeRow(Parity(steps)); !row.Mismatch {
		t.Errorf("a valid step with smaller bodies was not flagged: %+v", row)
	}
	// with no step valid on both, every measured step counts, and the difference shows
	steps = paritySteps(func(s *StepResult) { s.Outcome = OutcomeBroken; s.Endpoints[0].BodyBytes = 0 })
	row = sizeRow(Parity(steps))
	if !row.Mismatch || !strings.Contains(row.Basis, "every measured step") {
		t.Errorf("empty bodies on a broken-only orchestrator were hidden: %+v", row)
	}
}

// Kubernetes publishes its entry as a NodePort, Nomad and Swarm as a host
// port: each its own, so the row differs by nature; a NodePort-like entry
// on Nomad would be flagged.
func TestParityEntryKindsNativeToEachOrchestrator(t *testing.T) {
	steps := paritySteps(func(s *StepResult) { s.Orchestrator, s.Metadata["entry"] = "kubernetes", "node-port" })
	for _, r := range Parity(steps) {
		if r.Aspect == "entry" && (r.Mismatch || !r.Inherent) {
			t.Errorf("native entries flagged: %+v", r)
		}
	}
	steps = paritySteps(func(s *StepResult) { s.Metadata["entry"] = "node-port" })
	m := Mismatches(Parity(steps))
	if len(m) != 1 || m[0].Aspect != "entry" {
		t.Errorf("a node-port entry on swarm not flagged: %+v", m)
	}
}
