package experiment

import (
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/zclconf/go-cty/cty"
)

// levels reads the load levels: rates, a rates_from/to/step range, or a
// closed_loop block with a user population.
func (p *parser) levels(block *hcl.Block, a hcl.Attributes, blocks hcl.Blocks, app *App) {
	_, hasList := a["rates"]
	_, hasFrom := a["rates_from"]
	_, hasTo := a["rates_to"]
	_, hasStep := a["rates_step"]
	hasRange := hasFrom || hasTo || hasStep
	var closed *hcl.Block
	for _, b := range blocks {
		if closed != nil {
			p.errorf(b.DefRange, "Duplicate "+b.Type+" block", "only one closed_loop or iterations block is allowed")
			continue
		}
		closed = b
	}
	kinds := 0
	for _, has := range []bool{hasList, hasRange, closed != nil} {
		if has {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		p.errorf(block.DefRange, "Missing load levels", "app %q needs rates = [...], rates_from/rates_to/rates_step, a closed_loop or an iterations block", app.Name)
		return
	case kinds > 1:
		p.errorf(block.DefRange, "Conflicting load levels", "app %q: use only one of rates, rates_from/rates_to/rates_step, closed_loop and iterations", app.Name)
		return
	}
	switch {
	case hasList:
		if p.decode(a, "rates", &app.Rates) {
			rng := a["rates"].Expr.Range()
			if len(app.Rates) == 0 {
				p.errorf(rng, "Invalid rates", "list at least one rate")
			}
			p.checkRates(app.Rates, rng)
		}
	case hasRange:
		if !hasFrom || !hasTo || !hasStep {
			p.errorf(block.DefRange, "Incomplete rate range", "rates_from, rates_to and rates_step must all be set")
			return
		}
		var from, to, step float64
		ok := p.decode(a, "rates_from", &from)
		ok = p.decode(a, "rates_to", &to) && ok
		ok = p.decode(a, "rates_step", &step) && ok
		if !ok {
			return
		}
		switch {
		case step <= 0:
			p.errorf(a["rates_step"].Expr.Range(), "Invalid rates_step", "rates_step must be positive, got %g", step)
		case to < from:
			p.errorf(a["rates_to"].Expr.Range(), "Invalid rates_to", "rates_to (%g) is below rates_from (%g)", to, from)
		case (to-from)/step >= maxLevels:
			p.errorf(a["rates_step"].Expr.Range(), "Too many rates", "the range gives more than %d rates", maxLevels)
		default:
			// Multiply rather than accumulate so 0.1 steps do not drift.
			n := int(math.Floor((to-from)/step+1e-9)) + 1
			for i := 0; i < n; i++ {
				app.Rates = append(app.Rates, from+float64(i)*step)
			}
			p.checkRates(app.Rates, a["rates_from"].Expr.Range())
		}
	case closed.Type == "iterations":
		p.iterations(closed, app)
	default:
		p.closedLoop(closed, app)
	}
}

func (p *parser) checkRates(rates []float64, rng hcl.Range) {
	seen := map[float64]bool{}
	for _, r := range rates {
		if r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			p.errorf(rng, "Invalid rate", "rates must be positive requests/s, got %g", r)
		}
		if seen[r] {
			p.errorf(rng, "Duplicate rate", "%g is listed twice", r)
		}
		seen[r] = true
	}
	sort.Float64s(rates)
}

func (p *parser) closedLoop(b *hcl.Block, app *App) {
	content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "users", Required: true},
		{Name: "think"},
		{Name: "spawn_rate"},
	}})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	app.Load.Kind = LoadClosed
	app.Load.Think = p.duration(a, "think", false)
	if p.decode(a, "spawn_rate", &app.Load.SpawnRate) && !(app.Load.SpawnRate > 0 && app.Load.SpawnRate <= 1e6) {
		p.errorf(a["spawn_rate"].Expr.Range(), "Invalid spawn_rate", "spawn_rate is users started per second, more than 0; got %g (leave it out to start them all at once)", app.Load.SpawnRate)
	}
	attr, ok := a["users"]
	if !ok {
		return
	}
	// users is a number or a list of numbers (several populations).
	val, d := attr.Expr.Value(nil)
	p.diags = append(p.diags, d...)
	if d.HasErrors() {
		return
	}
	var users []int
	if val.Type() == cty.Number {
		var n int
		if !p.decodeExpr(attr.Expr, &n) {
			return
		}
		users = []int{n}
	} else if !p.decodeExpr(attr.Expr, &users) {
		return
	}
	seen := map[int]bool{}
	for _, u := range users {
		if u < 1 {
			p.errorf(attr.Expr.Range(), "Invalid users", "users must be at least 1, got %d", u)
		}
		if seen[u] {
			p.errorf(attr.Expr.Range(), "Duplicate users", "%d is listed twice", u)
		}
		seen[u] = true
	}
	if len(users) == 0 {
		p.errorf(attr.Expr.Range(), "Invalid users", "list at least one user count")
	}
	sort.Ints(users)
	app.Users = users
}

// fault reads the fault injected into every step of an app during load.
func (p *parser) fault(b *hcl.Block) *Fault {
	content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "kind", Required: true},
		{Name: "service"},
		{Name: "after", Required: true},
		{Name: "node"},
		{Name: "agent"},
		{Name: "duration"},
	}})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	f := &Fault{}
	var kind string
	if p.decode(a, "kind", &kind) {
		// a former name still means its fault: a spec that worked keeps working
		k, _, ok := orchestrator.ParseFaultKind(kind)
		if !ok {
			p.errorf(a["kind"].Expr.Range(), "Unknown fault kind", "%q; valid: %s", kind, orchestrator.FaultKindList())
		}
		f.Kind = k
	}
	p.decode(a, "service", &f.Service)
	f.After = p.duration(a, "after", true)
	p.nodeFault(b, a, f)
	return f
}

// probe reads an app's correctness probe, which replaces the one its pack
// declares in job meta.
func (p *parser) probe(b *hcl.Block) *Probe {
	content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "path", Required: true},
		{Name: "status"},
		{Name: "min_bytes"},
		{Name: "regex"},
	}})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	pr := &Probe{Status: 200}
	if p.decode(a, "path", &pr.Path) && !strings.HasPrefix(pr.Path, "/") {
		p.errorf(a["path"].Expr.Range(), "Invalid probe path", "path must start with \"/\", got %q", pr.Path)
	}
	if p.decode(a, "status", &pr.Status) && (pr.Status < 100 || pr.Status > 599) {
		p.errorf(a["status"].Expr.Range(), "Invalid probe status", "status must be an HTTP status code, got %d", pr.Status)
	}
	if p.decode(a, "min_bytes", &pr.MinBytes) && pr.MinBytes < 0 {
		p.errorf(a["min_bytes"].Expr.Range(), "Invalid min_bytes", "min_bytes must be at least 0, got %d", pr.MinBytes)
	}
	if p.decode(a, "regex", &pr.Regex) {
		if _, err := regexp.Compile(pr.Regex); err != nil {
			p.errorf(a["regex"].Expr.Range(), "Invalid probe regex", "%v", err)
		}
	}
	return pr
}

func (p *parser) slo(b *hcl.Block, slo *SLO) {
	content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "p99_ms"},
		{Name: "min_achieved_ratio"},
		{Name: "max_error_ratio"},
	}})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	if p.decode(a, "p99_ms", &slo.P99Ms) && slo.P99Ms < 0 {
		p.errorf(a["p99_ms"].Expr.Range(), "Invalid p99_ms", "p99_ms must be positive (or 0 to disable), got %g", slo.P99Ms)
	}
	if p.decode(a, "min_achieved_ratio", &slo.MinAchievedRatio) && (slo.MinAchievedRatio < 0 || slo.MinAchievedRatio > 1) {
		p.errorf(a["min_achieved_ratio"].Expr.Range(), "Invalid min_achieved_ratio", "must be between 0 and 1, got %g", slo.MinAchievedRatio)
	}
	if p.decode(a, "max_error_ratio", &slo.MaxErrorRatio) && (slo.MaxErrorRatio < 0 || slo.MaxErrorRatio > 1) {
		p.errorf(a["max_error_ratio"].Expr.Range(), "Invalid max_error_ratio", "must be between 0 and 1, got %g", slo.MaxErrorRatio)
	}
}
