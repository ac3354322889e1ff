package report

import (
	stdhtml "html"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

// The Autoscaling table and chart: one row per configuration over its
// repetitions, an invalid one named and left out, one that never met the
// SLO again counted; one pair of lines per measured step in the chart.
func TestReportComparesAutoscalers(t *testing.T) {
	spec := &experiment.Sweep{Name: "autoscale", Repetitions: 2, Orchestrators: []string{"nomad", "swarm"}, SLO: experiment.SLO{P99Ms: 250}}
	rec := &results.SweepRecord{ID: "as-1", Spec: spec}
	f := func(v float64) *float64 { return &v }
	step := func(id, orch string, rep int, outcome results.Outcome, scaleOut, recovery *float64) results.StepResult {
		return results.StepResult{
			Labels:  results.Labels{Sweep: "as-1", Step: id, App: "taewa", Orchestrator: orch, Variant: "baseline", OfferedRPS: 1200, Rep: rep},
			Outcome: outcome, Reasons: map[bool][]string{true: {"scaling: the autoscaler's metric source held no sample"}}[outcome == results.OutcomeInvalid],
			Series: []results.Second{{T: 0, P99Ms: 5}, {T: 30, P99Ms: 900}, {T: 60, P99Ms: 20}},
			Scaling: &results.ScalingRecord{Scaler: orch + " scaler", Policy: contract.Autoscale{Group: "taewa", Min: 1, Max: 4, TargetCPU: 0.7},
				StepUpSeconds: 30, Timeline: []results.ScalingPoint{{T: 0, Serving: 1}, {T: 50, Serving: 3}},
				StartCount: 1, PeakCount: 3, FinalCount: 3, ScaleOutSeconds: scaleOut, RecoverySeconds: recovery, FirstDecisionSeconds: f(12),
				RequestsWhileScaling: 1000, ErrorsWhileScaling: 10},
		}
	}
	steps := []results.StepResult{
		step("n1", "nomad", 1, results.OutcomeValid, f(20), f(25)),
		step("n2", "nomad", 2, results.OutcomeBroken, f(30), nil),
		step("s1", "swarm", 1, results.OutcomeValid, f(15), f(18)),
		step("s2", "swarm", 2, results.OutcomeInvalid, nil, nil),
	}
	page, files := Build(rec, steps)
	all := stdhtml.UnescapeString(string(page))
	i := strings.Index(all, `id="scaling"`)
	if i < 0 {
		t.Fatal("no autoscaling table")
	}
	table := all[i : i+strings.Index(all[i:], "</table>")]
	rows := strings.Split(table, "<tr")[2:]
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (nomad, swarm):\n%s", len(rows), table)
	}
	for i, want := range [][]string{
		{` class="broken"`, "taewa-nomad-baseline", "nomad scaler", "taewa: 1 to 4 at 70 % CPU", ">2<", "25", "20 of 2000 (1.00 %)", "1 never met the SLO again"},
		{"taewa-swarm-baseline", ">1 (+1 invalid)<", "18", "invalid</strong>: s2: scaling: the autoscaler's metric source held no sample"},
	} {
		for _, w := range want {
			if !strings.Contains(rows[i], w) {
				t.Errorf("row %d lacks %q:\n%s", i, w, rows[i])
			}
		}
	}
	svg := string(files[scalingFile])
	if !strings.Contains(all, scalingFile) || !strings.Contains(svg, "instances serving") || !strings.Contains(svg, "SLO p99 250 ms") {
		t.Fatalf("no chart, or one without its axes and SLO:\n%.400s", svg)
	}
	// three measured steps, each a p99 line and an instances line; the invalid one left out
	if n := strings.Count(svg, "<title>"); n != 6 {
		t.Errorf("%d lines in the chart, want 6", n)
	}
	if strings.Contains(svg, ">s2 ") {
		t.Error("the invalid step is drawn")
	}
}
