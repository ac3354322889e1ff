package experiment

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// An app's autoscale block turns its steps into scaling steps: the pack is
// deployed with its autoscaling policy (the pack variable "autoscale",
// which the pack renders as a Nomad scaling block and orchbench translates
// into a HorizontalPodAutoscaler or its own Swarm scaler), the phases step
// the load up, and the step records how the instances followed:
//
//	rates = [200]
//	phases {
//	  phase { duration = "60s"  rate = 0.2 }   # the low rate, from min instances
//	  phase { duration = "240s" rate = 1 }     # the step up the autoscaler must answer
//	}
//	autoscale {
//	  min = 1            max = 4
//	  target_cpu = 0.7   # each instance's mean CPU, a share of what it reserves
//	  cooldown = "30s"   evaluation = "10s"
//	  settle = "2m"      # after the step up, the SLO must hold again by then
//	}
//
// A closed_loop instead of rates (study 000's scaling stage: its users at
// full speed from a reset to min) steps up at the start of the load.
//
// Every scaling step deploys afresh, so each starts from min instances, and
// its requests each take a new connection: connections held open from the
// start would stay with the instances that existed then, and the new ones
// would get no load whatever the autoscaler did.
type Autoscale struct {
	Min        int           `json:"min"`
	Max        int           `json:"max"`
	TargetCPU  float64       `json:"target_cpu"`
	Cooldown   time.Duration `json:"cooldown_ns"`
	Evaluation time.Duration `json:"evaluation_ns"`
	// Settle is the time after the step up by which the SLO must hold
	// again, and hold to the end; otherwise the step is broken.
	Settle time.Duration `json:"settle_ns"`
}

// DefaultSettle is an autoscale block's settle when it names none.
const DefaultSettle = 2 * time.Minute

// PackVar is the pack variable "autoscale" that renders the policy.
func (a Autoscale) PackVar() map[string]any {
	return map[string]any{
		"enabled": true, "min": float64(a.Min), "max": float64(a.Max), "target_cpu": a.TargetCPU,
		"cooldown": a.Cooldown.String(), "evaluation": a.Evaluation.String(),
	}
}

// StepUpAt is when the load first rises above its opening rate: the
// moment the autoscaler is answering, from the start of the phases.
func StepUpAt(phases []Phase) time.Duration {
	if len(phases) == 0 {
		return 0
	}
	first := max(phases[0].From, phases[0].To)
	var at time.Duration
	for _, p := range phases {
		// a ramp rises from its start, a higher flat phase at it
		if p.To > first || p.From > first {
			return at
		}
		at += p.Duration
	}
	return 0
}

func (p *parser) autoscale(blocks hcl.Blocks, app *App) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		p.errorf(b.DefRange, "Duplicate autoscale block", "only one autoscale block is allowed")
	}
	b := blocks[0]
	content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "min", Required: true}, {Name: "max", Required: true}, {Name: "target_cpu"},
		{Name: "cooldown"}, {Name: "evaluation"}, {Name: "settle"},
	}})
	p.diags = append(p.diags, diags...)
	if diags.HasErrors() {
		return
	}
	a := content.Attributes
	as := Autoscale{TargetCPU: 0.7, Cooldown: 30 * time.Second, Evaluation: 10 * time.Second, Settle: DefaultSettle}
	p.decode(a, "min", &as.Min)
	p.decode(a, "max", &as.Max)
	if as.Min < 1 {
		p.errorf(a["min"].Expr.Range(), "Invalid min", "min must be at least 1 instance, got %d", as.Min)
	}
	if as.Max < as.Min {
		p.errorf(a["max"].Expr.Range(), "Invalid max", "max (%d) must be at least min (%d)", as.Max, as.Min)
	}
	if p.decode(a, "target_cpu", &as.TargetCPU) && (as.TargetCPU <= 0 || as.TargetCPU > 1) {
		p.errorf(a["target_cpu"].Expr.Range(), "Invalid target_cpu", "target_cpu is a share of each instance's reserved CPU, above 0 and at most 1, got %g", as.TargetCPU)
	}
	for name, d := range map[string]*time.Duration{"cooldown": &as.Cooldown, "evaluation": &as.Evaluation, "settle": &as.Settle} {
		if _, set := a[name]; set {
			*d = p.duration(a, name, true)
		}
	}
	if _, set := app.Vars["autoscale"]; set {
		p.errorf(b.DefRange, "Conflicting autoscale", "app %q sets the pack variable autoscale in vars and has an autoscale block: keep the block", app.Name)
	}
	switch {
	case app.Load.Kind == LoadClosed:
		// study 000's shape: a closed loop at its full rate from the
		// reset, the scaling measured from the load's start
	case app.Load.Kind != LoadOpen:
		p.errorf(b.DefRange, "Conflicting load", "a scaling step needs a load that runs for its duration: rates and phases, or a closed_loop; %s block ends when its users have looped", loopBlock(app.Load.Kind))
	case len(app.Load.Phases) == 0:
		p.errorf(b.DefRange, "Missing phases", "a scaling step needs a load that steps up: a phases block, e.g. phase { duration = \"60s\" rate = 0.2 } then phase { duration = \"240s\" rate = 1 }")
	case StepUpAt(app.Load.Phases) == 0:
		p.errorf(b.DefRange, "Phases do not step up", "the load never rises above its first phase's rate, so there is nothing to scale for: begin with a lower phase")
	case StepUpAt(app.Load.Phases)+as.Settle > PhasesDuration(app.Load.Phases):
		p.errorf(b.DefRange, "Settle too long", "the load steps up %s into the phases and settle is %s, past their end (%s): lengthen the phases or shorten settle",
			StepUpAt(app.Load.Phases), as.Settle, PhasesDuration(app.Load.Phases))
	}
	if app.Vars == nil {
		app.Vars = map[string]any{}
	}
	app.Vars["autoscale"] = as.PackVar()
	app.Autoscale = &as
}
