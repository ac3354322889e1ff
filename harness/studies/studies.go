// Package studies regenerates the headline tables of the published studies
// orchbench reproduces, from a sweep's archived steps, and sets the
// published figures beside them. A sweep names its study in the spec
// (study = "000"); the report shows the table with intervals over the
// repetitions that state their coverage (results.Estimate.Format), and
// says where our miniature differs from the original.
package studies

import (
	"fmt"
	"sort"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

// Table is one study's headline as regenerated.
type Table struct {
	Study   string
	Title   string
	Columns []string
	Rows    [][]string
	// Source cites the published figures.
	Source string
	// Notes say how the miniature differs from the study, and what is missing.
	Notes []string
}

var builders = map[string]func(sweep) *Table{
	"000": study000,
	"001": study001,
	"003": study003,
	"004": study004,
}

// Headline is the table of the study the sweep names, nil when it names none.
func Headline(rec *results.SweepRecord, steps []results.StepResult) *Table {
	if rec == nil || rec.Spec == nil || rec.Spec.Study == "" {
		return nil
	}
	build, ok := builders[rec.Spec.Study]
	if !ok {
		return &Table{Study: rec.Spec.Study, Title: "unknown study", Notes: []string{fmt.Sprintf("no headline is defined for study %q", rec.Spec.Study)}}
	}
	return build(join(rec, steps))
}

// sweep is the measured steps joined with their plan entries.
type sweep struct {
	steps []measured
	// invalid counts the steps left out as invalid
	invalid int
}

type measured struct {
	plan   experiment.Step
	result results.StepResult
}

func join(rec *results.SweepRecord, steps []results.StepResult) sweep {
	plan := map[string]experiment.Step{}
	for _, s := range rec.Plan {
		plan[s.ID] = s
	}
	var out sweep
	for _, r := range steps {
		p, ok := plan[r.Step]
		if !ok || r.Skipped {
			continue
		}
		if r.Outcome == results.OutcomeInvalid {
			out.invalid++
			continue
		}
		out.steps = append(out.steps, measured{plan: p, result: r})
	}
	sort.SliceStable(out.steps, func(i, j int) bool { return out.steps[i].plan.ID < out.steps[j].plan.ID })
	return out
}

// cpuCores is what the measured service's instances used on average over
// the step (their datastores left out); older archives have only per-task
// figures, summed.
func cpuCores(r results.StepResult) float64 {
	if r.ServiceCores > 0 {
		return r.ServiceCores
	}
	total, _ := results.AppCPUOf(r)
	return total
}

// perCore is the step's throughput per core its service used, false when
// unknown or under results.MinRatioCores.
func perCore(r results.StepResult) (float64, bool) {
	return results.PerCore(r.AchievedRPS, cpuCores(r))
}

// instanceCount is the measured service's instance count: the pack's scale
// when set, else the variant's own (horizontal for the horizontal
// variant, one for the others).
func instanceCount(m measured, horizontal string) string {
	if n := varString(m.plan.Vars, "scale"); n != "" && n != "0" {
		return n
	}
	if m.plan.Variant == "horizontal" {
		return horizontal
	}
	return "1"
}

func varString(vars map[string]any, name string) string {
	return experiment.VarText(vars[name])
}
