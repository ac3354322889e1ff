package experiment

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// An app's phases block gives every open-loop step the same arrival shape,
// scaled by the step's rate, so that rates = [10, 50, 100, 500] are the
// levels and the block says how each is reached (study 003's Artillery
// phases):
//
//	rates = [10, 50, 100, 500]
//	phases {
//	  phase { duration = "30s" }                   # a pad: no arrivals
//	  phase { duration = "60s"  from = 0  to = 1 } # a ramp to the step's rate
//	  phase { duration = "30s"  rate = 1 }         # the step's rate
//	  phase { duration = "30s" }                   # a pad
//	}
//
// A step with phases has no warm-up: the phases are the whole run, and the
// measured window is all of them, pads included, as Artillery reports a
// run. What is due is their integral (a ramp offers half its peak on
// average), so the throughput rule holds the achieved rate to the mean of
// the shape, not to its peak; the SLO's p99 is over the whole run as well,
// which is what Artillery reports and what study 003's figures are.

// Phase is one segment of a phases block: Duration during which the rate
// goes linearly from From to To times the step's rate (equal for a flat
// segment, both 0 for a pad).
type Phase struct {
	Duration time.Duration `json:"duration_ns"`
	From     float64       `json:"from"`
	To       float64       `json:"to"`
}

// maxPhases bounds a phases block, and maxPhasesDuration its length (a
// step's); more is a typo.
const (
	maxPhases         = 100
	maxPhasesDuration = 24 * time.Hour
)

// PhasesDuration is the length of the whole phase list.
func PhasesDuration(phases []Phase) time.Duration {
	var d time.Duration
	for _, p := range phases {
		d += p.Duration
	}
	return d
}

// ExpectedRequests is how many requests the phases offer at rate: their
// integral, each segment's duration times the mean of its two ends.
func ExpectedRequests(phases []Phase, rate float64) float64 {
	n := 0.0
	for _, p := range phases {
		n += p.Duration.Seconds() * rate * (p.From + p.To) / 2
	}
	return n
}

// PeakFactor is the largest multiple of the step's rate any phase reaches.
func PeakFactor(phases []Phase) float64 {
	peak := 0.0
	for _, p := range phases {
		peak = max(peak, p.From, p.To)
	}
	return peak
}

// PeakRPS is the highest rate the step offers: its rate, or with phases the
// phases' peak at it (what a connection pool must carry).
func (s Step) PeakRPS() float64 {
	if len(s.Load.Phases) == 0 {
		return s.OfferedRPS
	}
	return s.OfferedRPS * PeakFactor(s.Load.Phases)
}

// PhasesText writes phases at a step's rate the way `orchbench load
// --phases` reads them: "30s@0,1m0s@0->100,30s@100".
func PhasesText(phases []Phase, rate float64) string {
	parts := make([]string, 0, len(phases))
	for _, p := range phases {
		from, to := FormatRate(p.From*rate), FormatRate(p.To*rate)
		if from == to {
			parts = append(parts, p.Duration.String()+"@"+from)
		} else {
			parts = append(parts, p.Duration.String()+"@"+from+"->"+to)
		}
	}
	return strings.Join(parts, ",")
}

// phases reads an app's phases block: the rates are its levels, so a
// block without them (or with a closed loop) has nothing to scale.
func (p *parser) phases(blocks hcl.Blocks, a hcl.Attributes, app *App) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		p.errorf(b.DefRange, "Duplicate phases block", "only one phases block is allowed; the first is at %s", blocks[0].DefRange)
	}
	b := blocks[0]
	_, hasList := a["rates"]
	_, hasFrom := a["rates_from"]
	switch {
	case app.Load.Kind != LoadOpen:
		p.errorf(b.DefRange, "Conflicting load", "phases shape an open loop's arrivals at each of its rates; a %s block has users, not arrivals: drop one of them", loopBlock(app.Load.Kind))
		return
	case !hasList && !hasFrom:
		p.errorf(b.DefRange, "Missing rates", "phases are relative to each step's rate: add rates = [...] (or rates_from/rates_to/rates_step) to app %q", app.Name)
		return
	}
	content, diags := b.Body.Content(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "phase"}}})
	p.diags = append(p.diags, diags...)
	if len(content.Blocks) == 0 {
		p.errorf(b.DefRange, "Missing phases", "a phases block needs at least one phase { duration = \"30s\" ... } block")
		return
	}
	if len(content.Blocks) > maxPhases {
		p.errorf(content.Blocks[maxPhases].DefRange, "Too many phases", "a phases block holds at most %d phase blocks", maxPhases)
		return
	}
	var out []Phase
	for _, pb := range content.Blocks {
		out = append(out, p.phase(pb))
	}
	var total time.Duration
	for _, ph := range out {
		if total += ph.Duration; total > maxPhasesDuration || total < 0 {
			p.errorf(b.DefRange, "Phases too long", "the phases last more than %s; a step that long is a typo", maxPhasesDuration)
			return
		}
	}
	if PeakFactor(out) == 0 && !p.diags.HasErrors() {
		p.errorf(b.DefRange, "Phases send nothing", "every phase is a pad (no rate, from or to above 0): no request would be sent")
	}
	app.Load.Phases = out
}

func loopBlock(kind string) string {
	if kind == LoadIterations {
		return "an iterations"
	}
	return "a closed_loop"
}

// phase reads one phase block: a duration and either rate (flat) or from
// and to (a ramp), multiples of the step's rate; neither is a pad.
func (p *parser) phase(b *hcl.Block) Phase {
	content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "duration", Required: true}, {Name: "rate"}, {Name: "from"}, {Name: "to"},
	}})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	ph := Phase{Duration: p.duration(a, "duration", true)}
	factor := func(name string) (float64, bool) {
		var f float64
		if !p.decode(a, name, &f) {
			return 0, false
		}
		if f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			p.errorf(a[name].Expr.Range(), "Invalid "+name, "%s is a multiple of the step's rate, 0 or more, got %g", name, f)
			return 0, false
		}
		return f, true
	}
	_, hasFrom := a["from"]
	_, hasTo := a["to"]
	if r, set := a["rate"]; set {
		if hasFrom || hasTo {
			p.errorf(r.Expr.Range(), "Conflicting phase rate", "a phase is flat (rate) or a ramp (from and to), not both")
			return ph
		}
		f, _ := factor("rate")
		ph.From, ph.To = f, f
		return ph
	}
	if hasFrom != hasTo {
		p.errorf(b.DefRange, "Incomplete ramp", "a ramp needs both from and to (multiples of the step's rate); a flat phase takes rate")
		return ph
	}
	ph.From, _ = factor("from")
	ph.To, _ = factor("to")
	return ph
}

// artilleryLoad checks what runner = "artillery" can run: its arrival
// phases (or one flat phase at each rate), in whole seconds and whole
// arrivals per second, as Artillery's phases count them.
func (p *parser) artilleryLoad(rng hcl.Range, app *App, via string) {
	l := app.Load
	switch {
	case l.Kind != LoadOpen:
		p.errorf(rng, "Unsupported load for runner", "runner %q sends arrivals at a rate (each virtual user one request), not a population of users: use rates (and a phases block), not %s load%s", l.Runner, l.Kind, via)
		return
	case l.Script != "" || l.Workload != "":
		p.errorf(rng, "Unsupported load for runner", "runner %q sends one request path; a script or workload needs runner = \"orchbench\"%s", l.Runner, via)
		return
	case l.Distribution == "exp":
		p.errorf(rng, "Unsupported load for runner", "runner %q spaces its arrivals evenly; distribution = \"exp\" needs runner = \"orchbench\"%s", l.Runner, via)
		return
	}
	for i, ph := range l.Phases {
		if ph.Duration%time.Second != 0 {
			p.errorf(rng, "Unsupported phases for runner", "runner %q runs phases of whole seconds; phase %d lasts %s%s", l.Runner, i+1, ph.Duration, via)
			return
		}
	}
	for _, r := range app.Rates {
		shape := l.Phases
		if len(shape) == 0 {
			shape = []Phase{{From: 1, To: 1}}
		}
		for i, ph := range shape {
			for _, f := range []float64{ph.From, ph.To} {
				if x := f * r; math.Abs(x-math.Round(x)) > 1e-9 {
					p.errorf(rng, "Unsupported rate for runner", "runner %q counts whole arrivals per second; at rate %s phase %d asks %s/s%s", l.Runner, FormatRate(r), i+1, FormatRate(x), via)
					return
				}
			}
		}
	}
}

// phasesLoadText is a plan line's load with phases: the shape at the
// step's rate and what it offers in all.
func phasesLoadText(st Step) string {
	n := ExpectedRequests(st.Load.Phases, st.OfferedRPS)
	d := PhasesDuration(st.Load.Phases)
	return fmt.Sprintf("phases %s (%.0f requests, mean %.1f rps over %s)", PhasesText(st.Load.Phases, st.OfferedRPS), n, n/d.Seconds(), d)
}
