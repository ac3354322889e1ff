package report

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

// The policy, spread and shipping rows reach the page: a load that fell
// 70/30 on Kubernetes' pods against an even spread on Nomad is flagged
// with both figures, and the agent shipping Nomad's logs only is flagged.
func TestReportParityShowsSpreadPolicyAndShipping(t *testing.T) {
	spec := &experiment.Sweep{Name: "cross", Repetitions: 1, Orchestrators: []string{"nomad", "kubernetes"},
		SLO: experiment.SLO{P99Ms: 100, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}}
	rec := &results.SweepRecord{ID: "cross-1", Spec: spec}
	step := func(orch string, coresA, coresB float64, jobs []string) results.StepResult {
		r := results.StepResult{
			Labels: results.Labels{Sweep: "cross-1", Step: "taewa-" + orch + "-horizontal-r100-rep1", App: "taewa", Orchestrator: orch, Variant: "horizontal", OfferedRPS: 100, Rep: 1},
			Gates:  []results.Gate{{Name: "limits", Passed: true}}, AchievedRPS: 100,
			Metadata: map[string]any{
				"limits": []any{map[string]any{"group": "taewa", "task": "taewa", "quota_cores": 0.5, "effective_cores": 0.5, "memory_limit_mib": 512,
					"cgroup_version": 1, "cpu_weight": 512, "cpuset_size": 2, "swap_accounted": true, "swap_limit_bytes": 0}},
				"endpoints": []any{map[string]any{"address": "10.0.0.1", "port": 80, "instance": orch + "-a"}, map[string]any{"address": "10.0.0.2", "port": 80, "instance": orch + "-b"}},
				"task_cpu":  []any{map[string]any{"alloc_id": orch + "-a", "cores": coresA}, map[string]any{"alloc_id": orch + "-b", "cores": coresB}},
				"shipping":  map[string]any{"mode": "on", "agent": "orchbench-agent", "jobs": jobs},
			},
		}
		r.Decide()
		return r
	}
	page, _ := Build(rec, []results.StepResult{step("nomad", 0.25, 0.25, []string{"taewa-horizontal"}), step("kubernetes", 0.35, 0.15, nil)})
	html := string(page)
	for _, want := range []string{"load spread over instances", "imbalance 1.40", "imbalance 1.00", "cpu.shares 512, quota spread over 2 CPUs, no swap",
		"log shipping", "on: the agent runs but ships none of these task logs", "2 mismatch(es) other than the orchestrator"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
