package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/orchbench/orchbench/harness/orchestrator"
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
		{Type: "app_defaults"},
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
	defaults := p.appDefaults(content.Blocks)
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
			if app, ok := p.app(b, defaults); ok {
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
		{Name: "variants"}, // required of an app, which may take it from app_defaults
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
		{Name: "locustfile"},
		{Name: "generator_cores"},
		{Name: "max_generator_lag"},
		{Name: "engine"},
		{Name: "runner"},
		{Name: "timeout"},
		{Name: "shipping"},
		{Name: "ha"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "closed_loop"}, {Type: "iterations"}, {Type: "probe"}, {Type: "fault"}, {Type: "phases"}, {Type: "autoscale"}},
}

// checkFile refuses a file the spec names (relative to the repository
// root) that is not there, at the attribute that names it.
func (p *parser) checkFile(attr *hcl.Attribute, file, summary string) {
	if !filepath.IsAbs(file) {
		file = filepath.Join(p.opts.BaseDir, file)
	}
	if _, err := os.Stat(file); err != nil {
		p.errorf(attr.Expr.Range(), summary, "%v", err)
	}
}

// maxLevels bounds rates_from/to/step so a wrong step cannot plan a million steps.
const maxLevels = 1000

func (p *parser) app(block *hcl.Block, defaults *hcl.BodyContent) (App, bool) {
	before := len(p.diags.Errs())
	app := App{
		Name: block.Labels[0],
		Pack: block.Labels[0],
		Load: Load{Kind: LoadOpen, Threads: 2, Connections: 16, Distribution: "fixed"},
	}
	p.checkName("app name", app.Name, block.LabelRanges[0])
	own, diags := block.Body.Content(appSchema)
	p.diags = append(p.diags, diags...)
	content := withDefaults(own, defaults)
	a := content.Attributes
	if _, ok := a["variants"]; !ok {
		p.errorf(block.DefRange, "Missing required argument", "The argument \"variants\" is required, in the app block or in app_defaults.")
	}

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
	app.Vars = p.mergedVars(own, defaults)
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
		p.checkFile(a["script"], app.Load.Script, "Script not found")
	}
	if app.Load.Workload != "" && app.Load.Script != "" {
		p.errorf(a["script"].Expr.Range(), "Conflicting load", "set workload or script, not both")
	}
	if p.decode(a, "locustfile", &app.Load.Locustfile) {
		p.checkFile(a["locustfile"], app.Load.Locustfile, "Locustfile not found")
	}

	var loops, phases, autoscale hcl.Blocks
	for _, b := range content.Blocks {
		switch {
		case b.Type == "autoscale":
			autoscale = append(autoscale, b)
		case b.Type == "closed_loop" || b.Type == "iterations":
			loops = append(loops, b)
		case b.Type == "phases":
			phases = append(phases, b)
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
	p.phases(phases, a, &app)
	p.autoscale(autoscale, &app)
	p.runner(block, a, &app)
	p.locustfile(a, &app)
	return app, len(p.diags.Errs()) == before
}
