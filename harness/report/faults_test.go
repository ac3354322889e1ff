package report

import (
	stdhtml "html"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

// The "Faults and recovery" table and chart, from steps as read back from
// an archive (JSON trees): one row per orchestrator × shape × kind, a
// recovered kill-node on HA on, one that never recovered on HA off shown as
// such in the table and as a cross in the chart.
func TestReportComparesFaultsAndRecovery(t *testing.T) {
	spec := &experiment.Sweep{Name: "ha", Repetitions: 1, Orchestrators: []string{"nomad"}}
	rec := &results.SweepRecord{ID: "ha-1", Spec: spec, Plan: []experiment.Step{
		{ID: "kn-on", HA: experiment.HAOn}, {ID: "kn-off", HA: experiment.HAOff}, {ID: "base", HA: experiment.HAOn},
	}}
	step := func(id string, outcome results.Outcome, fault map[string]any) results.StepResult {
		return results.StepResult{Labels: results.Labels{Sweep: "ha-1", Step: id, App: "sn", Orchestrator: "nomad", Variant: "baseline", OfferedRPS: 20, Rep: 1},
			Outcome: outcome, Metadata: map[string]any{"fault": fault}}
	}
	windows := func(during, after float64) []any {
		ws := []any{map[string]any{"name": "during", "requests": 200.0, "errors": during}}
		if after >= 0 {
			ws = append(ws, map[string]any{"name": "after", "requests": 400.0, "errors": after})
		}
		return ws
	}
	steps := []results.StepResult{
		step("kn-on", results.OutcomeBroken, map[string]any{"kind": "kill-node", "node": map[string]any{"name": "w2", "role": "worker"},
			"all_healthy_seconds": 31.5, "windows": windows(40, 3), "timeouts_in_step": 4.0, "dataset_after": map[string]any{"passed": true}}),
		step("kn-off", results.OutcomeBroken, map[string]any{"kind": "kill-node", "node": map[string]any{"name": "w2", "role": "worker"},
			"all_healthy_note": "1 of 2 instances running", "windows": windows(90, -1)}),
		{Labels: results.Labels{Sweep: "ha-1", Step: "base", App: "sn", Orchestrator: "nomad", OfferedRPS: 20, Rep: 1}, Outcome: results.OutcomeValid, Metadata: map[string]any{}},
	}
	page, files := Build(rec, steps)
	all := stdhtml.UnescapeString(string(page))
	i := strings.Index(all, `id="faults-recovery"`)
	if i < 0 {
		t.Fatal("no faults and recovery table")
	}
	table := all[i : i+strings.Index(all[i:], "</table>")]
	rows := strings.Split(table, "<tr")[2:]
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (HA off, HA on):\n%s", len(rows), table)
	}
	for i, want := range [][]string{
		{` class="broken"`, "HA off (1 server)", "kill-node", "0 of 1 recovered, not before the step ended: kn-off: 1 of 2 instances running", "90 of 290 (31.03 %)", "not verified"},
		{"HA on (3 servers)", "31.5 (n=1) s; 1 of 1 recovered", "40 of 240 (16.67 %)", "3 of 403 (0.74 %)", "<td class=\"num\">4</td>", "none (1 of 1 verified)"},
	} {
		for _, w := range want {
			if !strings.Contains(rows[i], w) {
				t.Errorf("row %d lacks %q:\n%s", i, w, rows[i])
			}
		}
	}
	if strings.Contains(rows[1], `class="broken"`) {
		t.Error("the recovered row is marked as not recovered")
	}
	svg := string(files[faultRecoveryFile])
	if strings.Count(svg, "<circle") != 1 || strings.Count(svg, `stroke="#b00"`) != 1 || !strings.Contains(svg, "nomad, ha off: kill-node") {
		t.Errorf("the chart has %d dots and %d crosses, want 1 and 1:\n%s", strings.Count(svg, "<circle"), strings.Count(svg, `stroke="#b00"`), svg)
	}

	// a sweep without faults has neither
	page, files = Build(rec, steps[2:])
	if strings.Contains(string(page), `id="faults-recovery"`) || files[faultRecoveryFile] != nil {
		t.Error("a faults and recovery section without any fault")
	}
}
