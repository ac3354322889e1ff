package experiment

import (
	"fmt"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/orchbench/orchbench/harness/placement"
	"github.com/zclconf/go-cty/cty"
)

// Options tell the parser where packs live and how to learn their variants.
type Options struct {
	// BaseDir is the repository root: packs are under BaseDir/packs and
	// relative script paths are resolved against it. Default ".".
	BaseDir string
	// ListVariants returns the valid variants of a pack, or an error when the
	// pack does not exist. Default: PackVariants(BaseDir/packs).
	ListVariants VariantLister
	// Now supplies the clock for a generated seed; default time.Now.
	Now func() time.Time
	// Runner, when set, is the load runner of every app block, as if each
	// said runner = Runner (sweep --runner): the same study measured by
	// another tool without a second spec. The sweep's name gains it.
	Runner string
	// Orchestrators are the names a spec may list. Default: the adapters
	// registered in this binary (orchestrator.Names()), so a parser never
	// accepts an orchestrator it could not run.
	Orchestrators []string
	// SingleNode says the sweep runs on the embedded single-node cluster,
	// where node-level faults are refused (harness/nodes.SingleNode).
	SingleNode bool
}

// SpecError carries every problem found in a spec, each with file, line and
// column, so one run reports all of them.
type SpecError struct{ Diags hcl.Diagnostics }

func (e *SpecError) Error() string {
	var b strings.Builder
	for i, d := range e.Diags {
		if i > 0 {
			b.WriteString("\n")
		}
		if d.Subject != nil {
			b.WriteString(d.Subject.String())
			b.WriteString(": ")
		}
		b.WriteString(d.Summary)
		if d.Detail != "" {
			b.WriteString("; ")
			b.WriteString(d.Detail)
		}
	}
	return b.String()
}

// ParseFile reads and validates the sweep spec at path.
func ParseFile(path string, opts Options) (*Sweep, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(src, path, opts)
}

// Parse validates a spec held in memory; filename is used in messages.
func Parse(src []byte, filename string, opts Options) (*Sweep, error) {
	if opts.BaseDir == "" {
		opts.BaseDir = "."
	}
	if opts.ListVariants == nil {
		opts.ListVariants = PackVariants(filepath.Join(opts.BaseDir, "packs"))
	}
	if opts.Orchestrators == nil {
		opts.Orchestrators = orchestrator.Names()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return nil, &SpecError{diags}
	}
	p := &parser{opts: opts}
	content, diags := file.Body.Content(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "sweep", LabelNames: []string{"name"}}},
	})
	p.diags = append(p.diags, diags...)
	sweeps := content.Blocks
	switch {
	case len(sweeps) == 0 && !p.diags.HasErrors():
		p.errorf(file.Body.MissingItemRange(), "Missing sweep block", "a spec holds exactly one sweep \"name\" { ... } block")
	case len(sweeps) > 1:
		p.errorf(sweeps[1].DefRange, "Duplicate sweep block", "a spec holds exactly one sweep block; the first is at %s", sweeps[0].DefRange)
	}
	if p.diags.HasErrors() {
		return nil, &SpecError{p.diags}
	}
	s := p.sweep(sweeps[0])
	if n := stepCount(s); !p.diags.HasErrors() && n > maxSteps {
		p.errorf(sweeps[0].DefRange, "Too many steps", "the sweep plans %.0f steps, more than %d; check repetitions and the load levels", n, maxSteps)
	}
	if !p.diags.HasErrors() {
		// Names may contain '-', so two different matrices cells could in
		// principle spell the same step ID; the archive needs them unique.
		seen := map[string]bool{}
		for _, st := range Plan(s) {
			if seen[st.ID] {
				p.errorf(sweeps[0].DefRange, "Ambiguous step ID", "two steps are both named %q; rename an app or variant", st.ID)
			}
			seen[st.ID] = true
		}
	}
	if p.diags.HasErrors() {
		return nil, &SpecError{p.diags}
	}
	s.File = filename
	s.Source = string(src)
	if opts.Runner != "" {
		s.Name += "-" + opts.Runner
		s.Description = strings.TrimSpace(s.Description + " (runner " + opts.Runner + " for every app, from --runner)")
	}
	return s, nil
}

// maxSteps bounds a sweep's plan: ten thousand steps of even one second
// each run for hours, so more is a typo (repetitions = 100000) that would
// otherwise exhaust memory while the plan is made.
const maxSteps = 10000

// stepCount is how many steps Plan makes of s, in float64 so that no
// product of large counts overflows before it is compared.
func stepCount(s *Sweep) float64 {
	n := 0.0
	for _, app := range s.Apps {
		n += float64(len(s.Orchestrators)) * float64(len(app.Variants)) * float64(len(app.Rates)+len(app.Users))
	}
	return n * float64(s.Repetitions)
}

type parser struct {
	opts  Options
	diags hcl.Diagnostics
}

func (p *parser) errorf(rng hcl.Range, summary, format string, args ...any) {
	r := rng
	p.diags = append(p.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  &r,
	})
}

// nameRE keeps names usable in step IDs, directory names and metric labels.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func (p *parser) checkName(what, name string, rng hcl.Range) {
	if !nameRE.MatchString(name) {
		p.errorf(rng, "Invalid "+what, "%q must start with a letter or digit and hold only letters, digits, '.', '_' and '-'", name)
	}
}

var sweepSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "study"},
		{Name: "seed"},
		{Name: "repetitions"},
		{Name: "deploy"},
		{Name: "warmup"},
		{Name: "duration", Required: true},
		{Name: "cooldown"},
		{Name: "early_stop"},
		{Name: "orchestrators"},
		{Name: "ha"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "app", LabelNames: []string{"name"}},
		{Type: "slo"},
	},
}

func (p *parser) sweep(block *hcl.Block) *Sweep {
	s := &Sweep{
		Name:          block.Labels[0],
		Repetitions:   1,
		Deploy:        DeployPerConfiguration,
		Orchestrators: []string{"nomad"},
		SLO:           SLO{MinAchievedRatio: 0.95, MaxErrorRatio: 0.01},
	}
	p.checkName("sweep name", s.Name, block.LabelRanges[0])
	content, diags := block.Body.Content(sweepSchema)
	p.diags = append(p.diags, diags...)
	a := content.Attributes

	p.decode(a, "description", &s.Description)
	if p.decode(a, "study", &s.Study) && !slices.Contains(Studies, s.Study) {
		p.errorf(a["study"].Expr.Range(), "Unknown study", "%q is not a study whose headline table orchbench regenerates; valid: %s", s.Study, strings.Join(Studies, ", "))
	}
	if _, ok := a["seed"]; ok {
		p.decode(a, "seed", &s.Seed)
	} else {
		// No seed: draw one, and record it so the order can be replayed.
		s.Seed = uint64(p.opts.Now().UnixNano())
		s.SeedGenerated = true
	}
	if p.decode(a, "repetitions", &s.Repetitions) && s.Repetitions < 1 {
		p.errorf(a["repetitions"].Expr.Range(), "Invalid repetitions", "repetitions must be at least 1, got %d", s.Repetitions)
	}
	if p.decode(a, "deploy", &s.Deploy) && s.Deploy != DeployPerConfiguration && s.Deploy != DeployPerStep {
		p.errorf(a["deploy"].Expr.Range(), "Invalid deploy", "deploy must be %q or %q, got %q", DeployPerConfiguration, DeployPerStep, s.Deploy)
	}
	s.Warmup = p.duration(a, "warmup", false)
	s.Duration = p.duration(a, "duration", true)
	s.Cooldown = p.duration(a, "cooldown", false)
	p.decode(a, "early_stop", &s.EarlyStop)
	if p.decode(a, "orchestrators", &s.Orchestrators) {
		p.orchestrators(s.Orchestrators, a["orchestrators"].Expr.Range())
	}
	s.HA, s.HAAt = p.ha(a)

	var slos []*hcl.Block
	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		switch b.Type {
		case "slo":
			slos = append(slos, b)
		case "app":
			if prev, dup := seen[b.Labels[0]]; dup {
				p.errorf(b.LabelRanges[0], "Duplicate app", "app %q is already defined at %s", b.Labels[0], prev)
				continue
			}
			seen[b.Labels[0]] = b.LabelRanges[0]
			if app, ok := p.app(b); ok {
				s.Apps = append(s.Apps, app)
			}
		}
	}
	if len(seen) == 0 {
		p.errorf(block.DefRange, "Missing app block", "sweep %q needs at least one app \"name\" { ... } block", s.Name)
	}
	if len(slos) > 1 {
		p.errorf(slos[1].DefRange, "Duplicate slo block", "only one slo block is allowed")
	}
	if len(slos) > 0 {
		p.slo(slos[0], &s.SLO)
	}
	return s
}

// ha reads an "ha" attribute (a sweep's or an app's) and where it stands,
// which a sweep refused for the running shape names.
func (p *parser) ha(a hcl.Attributes) (ha, at string) {
	if !p.decode(a, "ha", &ha) {
		return "", ""
	}
	rng := a["ha"].Expr.Range()
	if _, ok := HAServers[ha]; !ok {
		p.errorf(rng, "Invalid ha", "ha must be %q (3 servers) or %q (1 server), got %q", HAOn, HAOff, ha)
	}
	return ha, fmt.Sprintf("%s:%d", rng.Filename, rng.Start.Line)
}

func (p *parser) orchestrators(names []string, rng hcl.Range) {
	if len(names) == 0 {
		p.errorf(rng, "Invalid orchestrators", "list at least one orchestrator")
	}
	seen := map[string]bool{}
	for _, o := range names {
		switch {
		case !slices.Contains(p.opts.Orchestrators, o):
			p.errorf(rng, "Unknown orchestrator", "%q is not an orchestrator of this build; valid: %s", o, strings.Join(p.opts.Orchestrators, ", "))
		case seen[o]:
			p.errorf(rng, "Duplicate orchestrator", "%q is listed twice", o)
		}
		seen[o] = true
	}
}

var appSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "pack"},
		{Name: "variants", Required: true},
		{Name: "vars"},
		{Name: "variant_vars"},
		{Name: "rates"},
		{Name: "rates_from"},
		{Name: "rates_to"},
		{Name: "rates_step"},
		{Name: "threads"},
		{Name: "connections"},
		{Name: "distribution"},
		{Name: "path"},
		{Name: "workload"},
		{Name: "script"},
		{Name: "generator_cores"},
		{Name: "max_generator_lag"},
		{Name: "engine"},
		{Name: "runner"},
		{Name: "timeout"},
		{Name: "shipping"},
		{Name: "ha"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "closed_loop"}, {Type: "iterations"}, {Type: "probe"}, {Type: "fault"}},
}

// maxLevels bounds rates_from/to/step so a wrong step cannot plan a million steps.
const maxLevels = 1000

func (p *parser) app(block *hcl.Block) (App, bool) {
	before := len(p.diags.Errs())
	app := App{
		Name: block.Labels[0],
		Pack: block.Labels[0],
		Load: Load{Kind: LoadOpen, Threads: 2, Connections: 16, Distribution: "fixed"},
	}
	p.checkName("app name", app.Name, block.LabelRanges[0])
	content, diags := block.Body.Content(appSchema)
	p.diags = append(p.diags, diags...)
	a := content.Attributes

	// Pack and variants: the pack must exist and know every variant.
	packRange := block.LabelRanges[0]
	if p.decode(a, "pack", &app.Pack) {
		packRange = a["pack"].Expr.Range()
	}
	var valid []string
	if nameRE.MatchString(app.Pack) {
		var err error
		valid, err = p.opts.ListVariants(app.Pack)
		if err != nil {
			p.errorf(packRange, "Unknown pack", "%v", err)
		}
	} else {
		p.checkName("pack name", app.Pack, packRange)
	}
	if p.decode(a, "variants", &app.Variants) {
		rng := a["variants"].Expr.Range()
		if len(app.Variants) == 0 {
			p.errorf(rng, "Invalid variants", "list at least one variant")
		}
		seen := map[string]bool{}
		for _, v := range app.Variants {
			if seen[v] {
				p.errorf(rng, "Duplicate variant", "%q is listed twice", v)
			}
			seen[v] = true
			if valid != nil && !slices.Contains(valid, v) {
				p.errorf(rng, "Unknown variant", "pack %q has no variant %q; valid: %s", app.Pack, v, strings.Join(valid, ", "))
			}
		}
	}

	app.HA, app.HAAt = p.ha(a)
	if p.decode(a, "shipping", &app.Shipping) && !slices.Contains(ShippingModes, app.Shipping) {
		p.errorf(a["shipping"].Expr.Range(), "Invalid shipping", "shipping must be %q or %q, got %q", ShippingOn, ShippingOff, app.Shipping)
	}
	app.Vars = p.varsMap(a, "vars")
	if attr, ok := a["variant_vars"]; ok {
		val, d := attr.Expr.Value(nil)
		p.diags = append(p.diags, d...)
		if !d.HasErrors() {
			if !val.Type().IsObjectType() && !val.Type().IsMapType() {
				p.errorf(attr.Expr.Range(), "Invalid variant_vars", "variant_vars must be an object of objects, e.g. { vertical = { cpu = 2 } }")
			} else {
				app.VariantVars = map[string]map[string]any{}
				for k, v := range val.AsValueMap() {
					if !slices.Contains(app.Variants, k) {
						p.errorf(attr.Expr.Range(), "Unknown variant in variant_vars", "%q is not among this app's variants (%s)", k, strings.Join(app.Variants, ", "))
						continue
					}
					m, ok := ctyToGo(v).(map[string]any)
					if !ok {
						p.errorf(attr.Expr.Range(), "Invalid variant_vars", "variant_vars.%s must be an object", k)
						continue
					}
					if _, bad := m["variant"]; bad {
						p.errorf(attr.Expr.Range(), "Invalid variant_vars", "variant_vars.%s sets \"variant\", which the matrix sets itself", k)
					}
					if nonFinite(m) {
						p.errorf(attr.Expr.Range(), "Invalid variant_vars", "variant_vars.%s holds a number beyond float64's range", k)
					}
					if err := placementVar(m); err != nil {
						p.errorf(attr.Expr.Range(), "Invalid variant_vars", "variant_vars.%s: %v", k, err)
					}
					app.VariantVars[k] = m
				}
			}
		}
	}

	p.decode(a, "threads", &app.Load.Threads)
	p.decode(a, "connections", &app.Load.Connections)
	if app.Load.Threads < 1 {
		p.errorf(rangeOf(a, "threads", block.DefRange), "Invalid threads", "threads must be at least 1, got %d", app.Load.Threads)
	}
	if app.Load.Connections < app.Load.Threads {
		p.errorf(rangeOf(a, "connections", block.DefRange), "Invalid connections", "connections (%d) must be at least threads (%d): every thread needs a connection", app.Load.Connections, app.Load.Threads)
	}
	if p.decode(a, "distribution", &app.Load.Distribution) && app.Load.Distribution != "fixed" && app.Load.Distribution != "exp" {
		p.errorf(a["distribution"].Expr.Range(), "Invalid distribution", "distribution must be \"fixed\" or \"exp\", got %q", app.Load.Distribution)
	}
	if p.decode(a, "path", &app.Load.Path) && app.Load.Path != "" && !strings.HasPrefix(app.Load.Path, "/") {
		p.errorf(a["path"].Expr.Range(), "Invalid path", "path must start with \"/\", got %q", app.Load.Path)
	}
	if p.decode(a, "engine", &app.Load.Engine) && !slices.Contains([]string{"auto", "loop", "goroutine"}, app.Load.Engine) {
		p.errorf(a["engine"].Expr.Range(), "Invalid engine", "engine must be \"auto\", \"loop\" or \"goroutine\", got %q", app.Load.Engine)
	}
	if p.decode(a, "generator_cores", &app.Load.GeneratorCores) && app.Load.GeneratorCores < 0 {
		p.errorf(a["generator_cores"].Expr.Range(), "Invalid generator_cores", "generator_cores must be 0 (no cap) or positive, got %g", app.Load.GeneratorCores)
	}
	if _, set := a["max_generator_lag"]; set {
		app.Load.MaxGeneratorLag = p.duration(a, "max_generator_lag", true)
	}
	p.decode(a, "workload", &app.Load.Workload)
	if p.decode(a, "script", &app.Load.Script) && app.Load.Script != "" {
		script := app.Load.Script
		if !filepath.IsAbs(script) {
			script = filepath.Join(p.opts.BaseDir, script)
		}
		if _, err := os.Stat(script); err != nil {
			p.errorf(a["script"].Expr.Range(), "Script not found", "%v", err)
		}
	}
	if app.Load.Workload != "" && app.Load.Script != "" {
		p.errorf(a["script"].Expr.Range(), "Conflicting load", "set workload or script, not both")
	}

	var loops hcl.Blocks
	for _, b := range content.Blocks {
		switch {
		case b.Type == "closed_loop" || b.Type == "iterations":
			loops = append(loops, b)
		case b.Type == "fault" && app.Fault != nil:
			p.errorf(b.DefRange, "Duplicate fault block", "only one fault block is allowed")
		case b.Type == "fault":
			app.Fault = p.fault(b)
		case app.Probe != nil:
			p.errorf(b.DefRange, "Duplicate probe block", "only one probe block is allowed")
		default:
			app.Probe = p.probe(b)
		}
	}
	p.levels(block, a, loops, &app)
	p.runner(block, a, &app)
	return app, len(p.diags.Errs()) == before
}

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
	}})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	app.Load.Kind = LoadClosed
	app.Load.Think = p.duration(a, "think", false)
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

// decode converts attribute name into target when present; it reports
// whether a value was stored. Type errors carry the expression's range.
func (p *parser) decode(a hcl.Attributes, name string, target any) bool {
	attr, ok := a[name]
	if !ok {
		return false
	}
	return p.decodeExpr(attr.Expr, target)
}

func (p *parser) decodeExpr(expr hcl.Expression, target any) bool {
	d := gohcl.DecodeExpression(expr, nil, target)
	p.diags = append(p.diags, d...)
	return !d.HasErrors()
}

func (p *parser) duration(a hcl.Attributes, name string, required bool) time.Duration {
	var s string
	if !p.decode(a, name, &s) {
		return 0
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		p.errorf(a[name].Expr.Range(), "Invalid "+name, "%q is not a duration like \"30s\" or \"2m\"", s)
	case d < 0:
		p.errorf(a[name].Expr.Range(), "Invalid "+name, "%s must not be negative", name)
	case required && d == 0:
		p.errorf(a[name].Expr.Range(), "Invalid "+name, "%s must be positive", name)
	}
	return d
}

func (p *parser) varsMap(a hcl.Attributes, name string) map[string]any {
	attr, ok := a[name]
	if !ok {
		return nil
	}
	val, d := attr.Expr.Value(nil)
	p.diags = append(p.diags, d...)
	if d.HasErrors() {
		return nil
	}
	m, ok := ctyToGo(val).(map[string]any)
	if !ok {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s must be an object like { resource_scale = 0.25 }", name)
		return nil
	}
	if _, bad := m["variant"]; bad {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s sets \"variant\", which the matrix sets itself", name)
	}
	if nonFinite(m) {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s holds a number beyond float64's range", name)
	}
	if err := placementVar(m); err != nil {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s: %v", name, err)
	}
	return m
}

// placementVar checks the placement variable every pack takes (the harness
// applies it, the pack never sees it), so a typo fails before any deploy.
func placementVar(m map[string]any) error {
	v, ok := m[placement.Variable]
	if !ok {
		return nil
	}
	s, isString := v.(string)
	if !isString {
		return fmt.Errorf("%s must be a string, one of %s", placement.Variable, placement.ModeList())
	}
	_, err := placement.Parse(s)
	return err
}

// nonFinite reports whether a value made by ctyToGo holds an infinity: HCL
// keeps 1e400 exactly, but vars travel on as JSON and --var text, which
// have no infinity (json.Marshal fails, and VarText would pass "+Inf").
func nonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsInf(x, 0) || math.IsNaN(x)
	case map[string]any:
		for _, e := range x {
			if nonFinite(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if nonFinite(e) {
				return true
			}
		}
	}
	return false
}

func rangeOf(a hcl.Attributes, name string, fallback hcl.Range) hcl.Range {
	if attr, ok := a[name]; ok {
		return attr.Expr.Range()
	}
	return fallback
}

// ctyToGo turns a literal HCL value into plain Go values that survive JSON
// and template rendering: whole numbers become int64, others float64.
func ctyToGo(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			if i, acc := bf.Int64(); acc == big.Exact {
				return i
			}
		}
		f, _ := bf.Float64()
		return f
	case t.IsObjectType() || t.IsMapType():
		out := map[string]any{}
		for k, e := range v.AsValueMap() {
			out[k] = ctyToGo(e)
		}
		return out
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := []any{}
		for _, e := range v.AsValueSlice() {
			out = append(out, ctyToGo(e))
		}
		return out
	}
	return nil
}
