package results

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// ScalingRow is the report's autoscaler comparison for one configuration
// (app × orchestrator × variant) over its scaling steps' repetitions.
type ScalingRow struct {
	Configuration string
	Orchestrator  string
	Scaler        string
	Policy        string
	// Steps are the measured repetitions (valid or broken); Invalid counts
	// those left out, with their reasons in InvalidWhy.
	Steps      []string
	Invalid    int
	InvalidWhy []string
	// FirstDecision, ScaleOut and Recovery are in seconds from the step up,
	// over the repetitions where each happened; NoScaleOut and
	// NotRecovered count the ones where it did not.
	FirstDecision Estimate
	ScaleOut      Estimate
	Recovery      Estimate
	NoScaleOut    int
	NotRecovered  int
	// Peak is the most instances serving at once; Errors and Requests sum
	// what users saw from the step up until the SLO held again.
	Peak     Estimate
	Errors   int64
	Requests int64
}

// ErrorsText reads "12 of 3400 (0.35 %)".
func (r ScalingRow) ErrorsText() string {
	if r.Requests == 0 {
		return "none sent"
	}
	return fmt.Sprintf("%d of %d (%.2f %%)", r.Errors, r.Requests, 100*float64(r.Errors)/float64(r.Requests))
}

// MissingText says how many repetitions lacked a scale-out or a recovery.
func (r ScalingRow) MissingText() string {
	var out []string
	if r.NoScaleOut > 0 {
		out = append(out, fmt.Sprintf("%d never scaled out", r.NoScaleOut))
	}
	if r.NotRecovered > 0 {
		out = append(out, fmt.Sprintf("%d never met the SLO again", r.NotRecovered))
	}
	return strings.Join(out, "; ")
}

// ScalingRows compares the autoscalers of a sweep's scaling steps.
func ScalingRows(steps []StepResult) []ScalingRow {
	rows := map[string]*ScalingRow{}
	type samples struct{ decision, scaleOut, recovery, peak []float64 }
	sm := map[string]*samples{}
	for _, s := range steps {
		rec := s.Scaling
		if rec == nil || s.Skipped {
			continue
		}
		c := s.Configuration()
		row := rows[c]
		if row == nil {
			row = &ScalingRow{Configuration: c, Orchestrator: s.Orchestrator}
			rows[c], sm[c] = row, &samples{}
		}
		row.Scaler = rec.Scaler
		row.Policy = fmt.Sprintf("%s: %d to %d at %.0f %% CPU", rec.Policy.Group, rec.Policy.Min, rec.Policy.Max, rec.Policy.TargetCPU*100)
		if s.Outcome == OutcomeInvalid {
			row.Invalid++
			row.InvalidWhy = append(row.InvalidWhy, s.Step+": "+strings.Join(s.Reasons, "; "))
			continue
		}
		row.Steps = append(row.Steps, s.Step)
		x := sm[c]
		if rec.FirstDecisionSeconds != nil {
			x.decision = append(x.decision, *rec.FirstDecisionSeconds)
		}
		if rec.ScaleOutSeconds != nil {
			x.scaleOut = append(x.scaleOut, *rec.ScaleOutSeconds)
		} else {
			row.NoScaleOut++
		}
		if rec.RecoverySeconds != nil {
			x.recovery = append(x.recovery, *rec.RecoverySeconds)
		} else {
			row.NotRecovered++
		}
		x.peak = append(x.peak, float64(rec.PeakCount))
		row.Errors += rec.ErrorsWhileScaling
		row.Requests += rec.RequestsWhileScaling
	}
	out := make([]ScalingRow, 0, len(rows))
	for c, row := range rows {
		x := sm[c]
		row.FirstDecision, row.ScaleOut, row.Recovery, row.Peak = estimateOf(x.decision), estimateOf(x.scaleOut), estimateOf(x.recovery), estimateOf(x.peak)
		out = append(out, *row)
	}
	slices.SortFunc(out, func(a, b ScalingRow) int { return cmp.Compare(a.Configuration, b.Configuration) })
	return out
}
