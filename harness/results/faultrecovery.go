package results

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// FaultRecoveryRow is the report's "Faults and recovery" comparison for one
// orchestrator, control-plane shape and fault kind, over the repetitions of
// steps that injected it. Every figure is read from the steps' FaultRecord.
type FaultRecoveryRow struct {
	Orchestrator string
	// Shape is the steps' ha (experiment.HAOn, HAOff), empty when the spec
	// declared none.
	Shape string
	Kind  orchestrator.FaultKind
	// Steps are the measured steps counted (valid or broken); Invalid those
	// left out (what ran was not what was declared).
	Steps   []string
	Invalid int
	// Recovery is the seconds from the injection until every instance ran
	// healthy again (node kinds: on the nodes still up; instance kinds: the
	// hit group's task started again), over the steps that recovered;
	// Unrecovered says, per step, what was still missing at its end.
	Recovery    Estimate
	Unrecovered []string
	// RecoverySeconds are the recovered steps' own times, for a dot chart.
	RecoverySeconds []float64
	// NotInjected are the steps whose fault failed, with why.
	NotInjected []string
	// During and After add up the load's windows over the steps: requests
	// and errors while the fault lasted and once every instance was back.
	During, After WindowTotal
	// Timeouts are the load's timed-out requests over the whole steps.
	Timeouts int64
	// LeaderBack (kill-leader) is the seconds until the orchestrator's
	// control plane had a leader again, over the steps that saw one;
	// LeaderLost counts those that saw none before their end.
	LeaderBack Estimate
	LeaderLost int
	// Scheduling (kill-leader) is the seconds until the job submitted after
	// the kill was placed; SchedulingNever counts steps where it was not,
	// SchedulingRefused the submissions refused before one was taken.
	Scheduling        Estimate
	SchedulingProbed  int
	SchedulingNever   int
	SchedulingRefused int
	// DatasetChecked counts steps whose dataset was verified after them,
	// DatasetFailed the ones that lost writes, with the verification's words.
	DatasetChecked int
	DatasetFailed  []string
	// HarnessCutOff are the steps whose node hit held the harness's own
	// API address: their figures read through it are the harness's loss.
	HarnessCutOff []string
}

// WindowTotal is requests and errors summed over one window of several
// steps: every request that ended in it, failed or not, and the failed.
type WindowTotal struct {
	Requests, Errors int64
	// Steps counts the steps that had this window.
	Steps int
}

func (w *WindowTotal) add(f FaultWindow) {
	// a window's Requests are the answered ones only: the ratio's
	// denominator adds the failed (the HA sweep's report once read "366 of
	// 57 (642 %)")
	w.Requests += f.Requests + f.Errors
	w.Errors += f.Errors
	w.Steps++
}

// Ratio is errors per request, 0 without requests.
func (w WindowTotal) Ratio() float64 {
	if w.Requests == 0 {
		return 0
	}
	return float64(w.Errors) / float64(w.Requests)
}

// String reads "41 of 300 (13.67 %)" or "-" when no step had the window.
func (w WindowTotal) String() string {
	if w.Steps == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d (%.2f %%)", w.Errors, w.Requests, 100*w.Ratio())
}

// ShapeText names a shape as the table shows it.
func (r FaultRecoveryRow) ShapeText() string {
	switch r.Shape {
	case experiment.HAOn:
		return "HA on (3 servers)"
	case experiment.HAOff:
		return "HA off (1 server)"
	}
	return "not declared"
}

// RecoveryText reads "27.6 (range 27.6–41.5, n=3, 75 %) s, 3 of 3
// recovered", and names what was missing in the steps that did not.
func (r FaultRecoveryRow) RecoveryText() string {
	n := len(r.Steps) - len(r.NotInjected)
	text := "-"
	if r.Recovery.N > 0 {
		text = r.Recovery.Format(1) + " s"
	}
	text += fmt.Sprintf("; %d of %d recovered", r.Recovery.N, n)
	if len(r.Unrecovered) > 0 {
		text += ", not before the step ended: " + strings.Join(r.Unrecovered, "; ")
	}
	return text
}

// SchedulingText reads the kill-leader probe's waits, or "-" for a kind
// without one.
func (r FaultRecoveryRow) SchedulingText() string {
	if r.SchedulingProbed == 0 {
		return "-"
	}
	text := "never placed"
	if r.Scheduling.N > 0 {
		text = "placed after " + r.Scheduling.Format(1) + " s"
	}
	if r.SchedulingNever > 0 && r.Scheduling.N > 0 {
		text += fmt.Sprintf("; not placed before the step ended in %d", r.SchedulingNever)
	}
	return text + fmt.Sprintf(" (%d steps, %d submissions refused)", r.SchedulingProbed, r.SchedulingRefused)
}

// LeaderText reads how soon the orchestrator had a leader again.
func (r FaultRecoveryRow) LeaderText() string {
	if r.LeaderBack.N == 0 && r.LeaderLost == 0 {
		return "-"
	}
	text := "none before the step ended"
	if r.LeaderBack.N > 0 {
		text = r.LeaderBack.Format(1) + " s"
	}
	if r.LeaderLost > 0 && r.LeaderBack.N > 0 {
		text += fmt.Sprintf("; none in %d", r.LeaderLost)
	}
	return text
}

// DatasetText says whether writes were lost.
func (r FaultRecoveryRow) DatasetText() string {
	switch {
	case r.DatasetChecked == 0:
		return "not verified"
	case len(r.DatasetFailed) == 0:
		return fmt.Sprintf("none (%d of %d verified)", r.DatasetChecked, r.DatasetChecked)
	}
	return fmt.Sprintf("%d of %d failed: %s", len(r.DatasetFailed), r.DatasetChecked, strings.Join(r.DatasetFailed, "; "))
}

// FaultsAndRecovery groups the steps that injected a fault by orchestrator,
// shape (each step's ha in the plan) and kind, in that order.
func FaultsAndRecovery(plan []experiment.Step, steps []StepResult) []FaultRecoveryRow {
	shape := map[string]string{}
	for _, st := range plan {
		shape[st.ID] = st.HA
	}
	type key struct {
		orch, shape string
		kind        orchestrator.FaultKind
	}
	rows := map[key]*FaultRecoveryRow{}
	samples := map[key]*struct{ recovery, leader, scheduling []float64 }{}
	for _, s := range steps {
		_, f := EventsOf(s)
		if f == nil || s.Skipped {
			continue
		}
		k := key{s.Orchestrator, shape[s.Step], f.Kind}
		row := rows[k]
		if row == nil {
			row = &FaultRecoveryRow{Orchestrator: k.orch, Shape: k.shape, Kind: k.kind}
			rows[k] = row
			samples[k] = &struct{ recovery, leader, scheduling []float64 }{}
		}
		if s.Outcome == OutcomeInvalid && f.Error == "" {
			row.Invalid++
			continue
		}
		row.Steps = append(row.Steps, s.Step)
		if f.Error != "" {
			row.NotInjected = append(row.NotInjected, s.Step+": "+f.Error)
			continue
		}
		sm := samples[k]
		if rec, note := f.recovered(); rec != nil {
			sm.recovery = append(sm.recovery, *rec)
		} else {
			row.Unrecovered = append(row.Unrecovered, s.Step+": "+note)
		}
		for _, w := range f.Windows {
			switch w.Name {
			case WindowDuring:
				row.During.add(w)
			case WindowAfter:
				row.After.add(w)
			}
		}
		row.Timeouts += f.TimeoutsInStep
		for _, l := range f.Leaders {
			if l.ControlPlane != s.Orchestrator {
				continue
			}
			if l.AfterSeconds != nil && l.After != "" {
				sm.leader = append(sm.leader, *l.AfterSeconds)
			} else {
				row.LeaderLost++
			}
		}
		if p := f.Scheduling; p != nil {
			row.SchedulingProbed++
			row.SchedulingRefused += p.Attempts
			if p.PlacedSeconds != nil {
				sm.scheduling = append(sm.scheduling, *p.PlacedSeconds)
			} else {
				row.SchedulingNever++
			}
		}
		if f.HarnessEndpoint != "" {
			row.HarnessCutOff = append(row.HarnessCutOff, s.Step+": "+f.HarnessEndpoint)
		}
		if f.Dataset != nil {
			row.DatasetChecked++
			if !f.Dataset.Passed {
				row.DatasetFailed = append(row.DatasetFailed, s.Step+": "+f.Dataset.Detail)
			}
		}
	}
	out := make([]FaultRecoveryRow, 0, len(rows))
	for k, row := range rows {
		sm := samples[k]
		row.Recovery = estimateOf(sm.recovery)
		row.RecoverySeconds = sm.recovery
		row.LeaderBack = estimateOf(sm.leader)
		row.Scheduling = estimateOf(sm.scheduling)
		out = append(out, *row)
	}
	slices.SortFunc(out, func(a, b FaultRecoveryRow) int {
		return cmp.Or(cmp.Compare(a.Orchestrator, b.Orchestrator), cmp.Compare(a.Shape, b.Shape), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// estimateOf is MedianCI, or no estimate (N = 0) without samples.
func estimateOf(xs []float64) Estimate {
	if len(xs) == 0 {
		return Estimate{}
	}
	return MedianCI(xs)
}

// recovered is the fault's recovery time, or why there is none: a node
// kind's every instance healthy again, an instance kind's task started.
func (f FaultRecord) recovered() (*float64, string) {
	if f.Node != nil || f.Kind.NodeLevel() {
		if f.AllHealthySeconds != nil {
			return f.AllHealthySeconds, ""
		}
		return nil, cmp.Or(f.AllHealthyNote, "not every instance healthy again")
	}
	if f.RecoverySeconds != nil {
		return f.RecoverySeconds, ""
	}
	return nil, "no task of " + f.Hit.Group + " started again"
}
