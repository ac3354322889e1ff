package studies

import (
	"fmt"
	"sort"

	"github.com/orchbench/orchbench/harness/results"
)

// Study 000's scaling stage: from a reset to the minimum, the apps under
// the closed loop at full speed for 14 × 60 s, and the time until the
// autoscaler had finished adding instances. Published: 330–440 s on EKS
// (HPA at 70 %), 607–656 s on the ASGs (CPU target policies). Ours: the
// same Taewa and load on each orchestrator's autoscaler, the exec driver
// (a process, the ASG's form) and the docker driver (a container, EKS's).
var published000Scaling = map[string]string{"process": "ASG: 607–656", "container": "EKS: 330–440"}

type scalingKey000 struct{ app, form, orchestrator, scaler string }

// hasScaling reports a sweep of scaling steps.
func hasScaling(s sweep) bool {
	for _, m := range s.steps {
		if m.result.Scaling != nil {
			return true
		}
	}
	return false
}

func study000Scaling(s sweep) *Table {
	type samples struct {
		scaleOut, peak []float64
		never          int
	}
	rows := map[scalingKey000]*samples{}
	for _, m := range s.steps {
		rec := m.result.Scaling
		if rec == nil {
			continue
		}
		form := "container"
		if varString(m.plan.Vars, "driver") == "exec" {
			form = "process"
		}
		k := scalingKey000{app: m.plan.Pack, form: form, orchestrator: m.plan.Orchestrator, scaler: rec.Scaler}
		smp := rows[k]
		if smp == nil {
			smp = &samples{}
			rows[k] = smp
		}
		smp.peak = append(smp.peak, float64(rec.PeakCount))
		if rec.ScaleOutSeconds != nil {
			smp.scaleOut = append(smp.scaleOut, *rec.ScaleOutSeconds)
		} else {
			smp.never++
		}
	}
	t := &Table{
		Study:   "000",
		Title:   "Study 000: scaling time, from the reset to the last instance added, under the closed loop at full speed",
		Columns: []string{"app", "form", "orchestrator", "scaler", "scaling time (s)", "instances at most", "never scaled out", "published (s)"},
		Source:  "Grigoryev 2022 (../shared/STUDIES.md, study 000): scaling 3 × (reset + 14 × 60 s); 330–440 s on EKS, 607–656 s on the ASGs",
		Notes: []string{
			"scaling time = from the start of the load (every step deploys afresh at the policy's min) until the most instances that served at once were all serving; the study timed its scaling stage from the reset to its end.",
			"the study scaled VMs (ASG) and nodes as well as pods (EKS): launching a VM was most of its time. Here instances are containers or processes on nodes that are already up, so the times measure the autoscalers' decisions and the orchestrators' placement, not machines booting.",
			"a miniature: a quarter core per instance, the load's users sized so that one instance saturates; the stage's 14 × 60 s may be shortened in the spec (experiments/study-000-scaling.hcl says by how much).",
			"the process form (the exec driver) is capped only as a cpuset of whole cores, so it needs nodes with whole cores to add; a row appears for it when a sweep has such steps.",
		},
	}
	var keys []scalingKey000
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.app != b.app {
			return a.app < b.app
		}
		if a.form != b.form {
			return a.form > b.form // process (ASG) first
		}
		return a.orchestrator < b.orchestrator
	})
	for _, k := range keys {
		smp := rows[k]
		t.Rows = append(t.Rows, []string{k.app, k.form, k.orchestrator, k.scaler,
			estimateOrDash(smp.scaleOut, 0), estimateOrDash(smp.peak, 0),
			fmt.Sprintf("%d of %d", smp.never, smp.never+len(smp.scaleOut)), published000Scaling[k.form]})
	}
	if s.invalid > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d invalid steps are left out.", s.invalid))
	}
	return t
}

// estimateOrDash is the median with its interval, "-" without samples.
func estimateOrDash(xs []float64, decimals int) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmtEstimate(results.MedianCI(xs), decimals)
}
