package gates

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// Scaling is the scaling step's validity gate: the autoscaler had samples
// of its metric, the step began from the policy's min, and every change of
// the instance count was the autoscaler's.
const Scaling = "scaling"

// ScalingEvidence is what a scaling step gathered around its load.
type ScalingEvidence struct {
	Scaler string
	Policy contract.Autoscale
	Settle time.Duration
	// StepUp is when the load rose, from Start, the measured load's start.
	StepUp time.Duration
	Start  time.Time
	// States were sampled every second while the load ran; SampleErrors
	// counts the samples that failed, SampleErr is the last failure.
	States       []orchestrator.ScaleState
	SampleErrors int
	SampleErr    error
	Events       []orchestrator.ScaleEvent
	EventsErr    error
	Metric       orchestrator.MetricSamples
	MetricErr    error
	Series       []results.Second
}

// eventSlack is how far apart a change of the desired count and the
// scaling event that made it may be read: the count is sampled once a
// second, and Kubernetes stamps its events to the second.
const eventSlack = 2 * time.Second

// ScalingRecordOf computes the step's scaling figures.
func ScalingRecordOf(ev ScalingEvidence, slo experiment.SLO) results.ScalingRecord {
	rec := results.ScalingRecord{Scaler: ev.Scaler, Policy: ev.Policy, SettleSeconds: ev.Settle.Seconds(), StepUpSeconds: ev.StepUp.Seconds(),
		Metric: ev.Metric, SampleErrors: ev.SampleErrors}
	if ev.SampleErr != nil {
		rec.SampleError = ev.SampleErr.Error()
	}
	at := func(t time.Time) float64 { return t.Sub(ev.Start).Seconds() }
	for _, s := range ev.States {
		rec.Timeline = append(rec.Timeline, results.ScalingPoint{T: at(s.At), Desired: s.Desired, Running: s.Running, Serving: s.Serving})
		rec.PeakCount = max(rec.PeakCount, s.Serving)
	}
	if n := len(ev.States); n > 0 {
		rec.StartCount, rec.FinalCount = ev.States[0].Serving, ev.States[n-1].Serving
	}
	stepUp := ev.StepUp.Seconds()
	for _, e := range ev.Events {
		se := results.ScalingEvent{T: at(e.At), From: e.From, To: e.To, By: e.By, Reason: e.Reason, Error: e.Error}
		if e.To > e.From {
			se.RunningSeconds = firstAfter(ev.States, e.At, func(s orchestrator.ScaleState) bool { return s.Running >= e.To })
			se.ServingSeconds = firstAfter(ev.States, e.At, func(s orchestrator.ScaleState) bool { return s.Serving >= e.To })
			if e.By == orchestrator.ScaledByAutoscaler && rec.FirstDecisionSeconds == nil {
				d := se.T - stepUp
				rec.FirstDecisionSeconds = &d
			}
		}
		rec.Events = append(rec.Events, se)
	}
	if rec.PeakCount > rec.StartCount {
		for _, p := range rec.Timeline {
			if p.Serving == rec.PeakCount {
				d := p.T - stepUp
				rec.ScaleOutSeconds = &d
				break
			}
		}
	}
	rec.RecoverySeconds = recovery(ev.Series, stepUp, slo)
	end := math.Inf(1) // never recovered: scaling until the end
	if rec.RecoverySeconds != nil {
		end = stepUp + *rec.RecoverySeconds
	}
	var achieved, offered float64
	for _, s := range ev.Series {
		if s.T >= stepUp && s.T < end {
			rec.RequestsWhileScaling += int64(s.Achieved+0.5) + s.Errors
			rec.ErrorsWhileScaling += s.Errors
		}
		if s.T >= end {
			achieved, offered = achieved+s.Achieved, offered+s.Offered
		}
	}
	if offered > 0 {
		rec.AchievedAfterRatio = achieved / offered
	}
	return rec
}

// firstAfter is the seconds from t to the first state at or after it that
// satisfies ok, nil when none does.
func firstAfter(states []orchestrator.ScaleState, t time.Time, ok func(orchestrator.ScaleState) bool) *float64 {
	for _, s := range states {
		if !s.At.Before(t.Add(-eventSlack)) && ok(s) {
			d := max(s.At.Sub(t).Seconds(), 0)
			return &d
		}
	}
	return nil
}

// withinSLO judges one second by its p99 and its errors. Its throughput is
// not judged alone: answers due in one second often complete in the next
// (1122 then 1278 of 1200 due), so the throughput is judged over the whole
// span after the recovery (ScalingRecord.AchievedAfterRatio).
func withinSLO(s results.Second, slo experiment.SLO) bool {
	requests := s.Achieved + float64(s.Errors)
	switch {
	case slo.P99Ms > 0 && s.P99Ms > slo.P99Ms:
		return false
	case requests > 0 && float64(s.Errors)/requests > slo.MaxErrorRatio:
		return false
	}
	return true
}

// recovery is the seconds from the step up to the start of the run of
// seconds within the SLO that lasts to the end; 0 when none after the step
// up was outside it, nil when the last one still was.
func recovery(series []results.Second, stepUp float64, slo experiment.SLO) *float64 {
	last := -1
	seen := false
	for i, s := range series {
		if s.T < stepUp {
			continue
		}
		seen = true
		if !withinSLO(s, slo) {
			last = i
		}
	}
	switch {
	case !seen || last == len(series)-1:
		return nil
	case last < 0:
		zero := 0.0
		return &zero
	}
	d := series[last+1].T - stepUp
	return &d
}

// ScalingGate judges whether the step measured the autoscaler it declared.
func ScalingGate(ev ScalingEvidence, rec results.ScalingRecord) results.Gate {
	g := results.Gate{Name: Scaling}
	var problems []string
	switch {
	case len(ev.States) == 0:
		problems = append(problems, fmt.Sprintf("the instance count was never read (%v)", ev.SampleErr))
	case ev.SampleErrors > len(ev.States):
		problems = append(problems, fmt.Sprintf("the instance count could not be read %d times of %d (%v)", ev.SampleErrors, ev.SampleErrors+len(ev.States), ev.SampleErr))
	}
	switch {
	case ev.MetricErr != nil:
		problems = append(problems, fmt.Sprintf("the autoscaler's metric source could not be read: %v", ev.MetricErr))
	case ev.Metric.Count == 0:
		p := fmt.Sprintf("the autoscaler's metric source (%s) held no sample of its metric during the load (%s), so it could not have scaled on it", ev.Metric.Source, metricName(ev.Metric))
		if ev.Metric.Note != "" {
			p += "; it said: " + ev.Metric.Note
		}
		problems = append(problems, p)
	}
	if ev.EventsErr != nil {
		problems = append(problems, fmt.Sprintf("the scaling events could not be read: %v", ev.EventsErr))
	}
	if len(ev.States) > 0 && ev.States[0].Desired != ev.Policy.Min {
		problems = append(problems, fmt.Sprintf("the load began with %d instances desired, not the policy's min %d", ev.States[0].Desired, ev.Policy.Min))
	}
	for _, e := range ev.Events {
		if e.By != orchestrator.ScaledByAutoscaler {
			problems = append(problems, fmt.Sprintf("instances went from %d to %d at %.0f s by something other than the autoscaler (%s)", e.From, e.To, e.At.Sub(ev.Start).Seconds(), e.Reason))
		}
	}
	if ev.EventsErr == nil {
		problems = append(problems, unexplainedChanges(ev)...)
	}
	if len(problems) > 0 {
		g.Detail = strings.Join(problems, "; ")
		return g
	}
	g.Passed = true
	scaled := 0
	for _, e := range ev.Events {
		if e.From != e.To {
			scaled++
		}
	}
	g.Detail = fmt.Sprintf("%s: %d samples of its metric (last %.0f%%, max %.0f%% of the reservation, target %.0f%%); %d scaling actions, all its own; instances serving %d at the start, %d at most, %d at the end",
		ev.Scaler, ev.Metric.Count, ev.Metric.Last, ev.Metric.Max, ev.Policy.TargetCPU*100, scaled, rec.StartCount, rec.PeakCount, rec.FinalCount)
	return g
}

func metricName(m orchestrator.MetricSamples) string {
	if m.Query != "" {
		return m.Query
	}
	return "CPU"
}

// unexplainedChanges lists the changes of the desired count that no
// scaling event made: a redeployment, or a scale that left no event.
func unexplainedChanges(ev ScalingEvidence) []string {
	var out []string
	for i := 1; i < len(ev.States); i++ {
		prev, cur := ev.States[i-1], ev.States[i]
		if prev.Desired == cur.Desired {
			continue
		}
		explained := false
		for _, e := range ev.Events {
			if e.To == cur.Desired && !e.At.Before(prev.At.Add(-eventSlack)) && !e.At.After(cur.At.Add(eventSlack)) {
				explained = true
				break
			}
		}
		if !explained {
			out = append(out, fmt.Sprintf("the desired instances went from %d to %d between %.0f s and %.0f s with no scaling event (something else scaled the service)",
				prev.Desired, cur.Desired, prev.At.Sub(ev.Start).Seconds(), cur.At.Sub(ev.Start).Seconds()))
		}
	}
	return out
}

// ScalingSLOGate replaces the SLO gate on a scaling step: the latency may
// rise while instances are added, but it must be back within the SLO by
// the settle time after the step up, and stay there. A step that never
// got back is broken: a measurement of the autoscaler, not a failure of
// the testbed.
func ScalingSLOGate(rec results.ScalingRecord, slo experiment.SLO) results.Gate {
	g := results.Gate{Name: SLO, Breaks: true}
	meanwhile := fmt.Sprintf("%d errors of %d requests meanwhile", rec.ErrorsWhileScaling, rec.RequestsWhileScaling)
	switch {
	case rec.RecoverySeconds == nil:
		g.Detail = fmt.Sprintf("the SLO (p99 %.0f ms, error ratio %.4f) did not hold again after the step up at %.0f s before the load ended; %s",
			slo.P99Ms, slo.MaxErrorRatio, rec.StepUpSeconds, meanwhile)
	case *rec.RecoverySeconds > rec.SettleSeconds:
		g.Detail = fmt.Sprintf("the SLO held again %.0f s after the step up, later than the settle time of %.0f s; %s", *rec.RecoverySeconds, rec.SettleSeconds, meanwhile)
	case rec.AchievedAfterRatio > 0 && rec.AchievedAfterRatio < slo.MinAchievedRatio:
		g.Detail = fmt.Sprintf("the p99 and errors held again %.0f s after the step up, but from then on %.3f of the offered rate was achieved, below %.2f; %s",
			*rec.RecoverySeconds, rec.AchievedAfterRatio, slo.MinAchievedRatio, meanwhile)
	default:
		g.Passed = true
		g.Detail = fmt.Sprintf("the SLO held again %.0f s after the step up (settle %.0f s); %s", *rec.RecoverySeconds, rec.SettleSeconds, meanwhile)
	}
	return g
}
