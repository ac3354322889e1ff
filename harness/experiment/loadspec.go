package experiment

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// The load runner and JMeter-style iterations of an app block:
//
//	app "books" {
//	  runner  = "orchbench"   # or "fortio" (closed loop, no think), "locust" (closed loop), "jmeter" (iterations), "artillery" (rates, phases)
//	  timeout = "1s"          # per request; a timeout is an error
//	  iterations {
//	    threads      = 5
//	    loops        = 20
//	    max_duration = "5m"   # default: the sweep's duration
//	    request { path = "/books" }
//	    request {
//	      method = "POST"
//	      path   = "/books"
//	      body   = "{\"title\":\"x\"}"
//	    }
//	  }
//	}

// runner checks the runner and timeout attributes against the load kind
// the levels chose, so a tool is never asked for what it cannot do.
func (p *parser) runner(block *hcl.Block, a hcl.Attributes, app *App) {
	if _, set := a["timeout"]; set {
		app.Load.Timeout = p.duration(a, "timeout", true)
	}
	var rng hcl.Range
	via := ""
	switch {
	case p.opts.Runner != "":
		app.Load.Runner, rng, via = p.opts.Runner, block.DefRange, " (from --runner)"
	case p.decode(a, "runner", &app.Load.Runner):
		rng = a["runner"].Expr.Range()
	default:
		return
	}
	if !slices.Contains(Runners, app.Load.Runner) {
		p.errorf(rng, "Invalid runner", "runner must be one of %s; got %q%s", strings.Join(Runners, ", "), app.Load.Runner, via)
		return
	}
	if app.Load.Runner == RunnerOrchbench {
		return
	}
	if app.Load.Runner == RunnerArtillery {
		p.artilleryLoad(rng, app, via)
		return
	}
	l := app.Load
	if l.Runner == RunnerJMeter {
		// JMeter's thread group is the iterations block; its other loads
		// (a thread group run for a duration) are ours to offer
		if l.Kind != LoadIterations {
			p.errorf(rng, "Unsupported load for runner", "runner %q runs a thread group of threads × loops × requests: use an iterations block, not %s load%s", l.Runner, l.Kind, via)
		}
		return
	}
	switch {
	case l.Kind != LoadClosed:
		p.errorf(rng, "Unsupported load for runner", "runner %q runs only a closed loop of users (fortio: at its maximum rate, -qps -1): use a closed_loop block, not %s load%s", l.Runner, l.Kind, via)
	case l.Think > 0 && l.Runner == RunnerFortio:
		p.errorf(rng, "Unsupported load for runner", "runner %q has no think time; drop think from closed_loop or use runner = \"orchbench\"%s", l.Runner, via)
	case l.SpawnRate > 0 && l.Runner == RunnerFortio:
		p.errorf(rng, "Unsupported load for runner", "runner %q starts all its connections at once; drop spawn_rate from closed_loop or use runner = \"orchbench\" or \"locust\"%s", l.Runner, via)
	case l.Script != "" || l.Workload != "":
		p.errorf(rng, "Unsupported load for runner", "runner %q sends one request path; a script or workload needs runner = \"orchbench\"%s", l.Runner, via)
	}
}

// locustfile holds a spec's own locustfile to the load it can run: Locust's
// closed loop of users, whose flow and wait time are the file's.
func (p *parser) locustfile(a hcl.Attributes, app *App) {
	l := app.Load
	if l.Locustfile == "" {
		return
	}
	rng := a["locustfile"].Expr.Range()
	switch {
	case l.RunnerName() != RunnerLocust:
		p.errorf(rng, "Locustfile without Locust", "a locustfile is run by runner = \"locust\"; this app's runner is %q (the same flow for orchbench's generator is a workload or a script)", l.RunnerName())
	case l.Think > 0:
		p.errorf(rng, "Conflicting think time", "the locustfile's users wait as its wait_time says; drop think from closed_loop")
	case l.Path != "":
		p.errorf(rng, "Conflicting load", "the locustfile's users send what it says; drop path")
	}
}

// iterations reads a JMeter-style thread group: threads users, each running
// the request sequence loops times, back to back.
func (p *parser) iterations(b *hcl.Block, app *App) {
	content, diags := b.Body.Content(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "threads", Required: true}, {Name: "loops", Required: true}, {Name: "max_duration"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "request"}},
	})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	app.Load.Kind = LoadIterations
	it := &Iterations{}
	app.Load.Iterations = it
	var threads int
	if p.decode(a, "threads", &threads) && threads < 1 {
		p.errorf(a["threads"].Expr.Range(), "Invalid threads", "threads must be at least 1, got %d", threads)
	}
	if p.decode(a, "loops", &it.Loops) && it.Loops < 1 {
		p.errorf(a["loops"].Expr.Range(), "Invalid loops", "loops must be at least 1, got %d", it.Loops)
	}
	if _, set := a["max_duration"]; set {
		it.MaxDuration = p.duration(a, "max_duration", true)
	}
	for _, rb := range content.Blocks {
		it.Requests = append(it.Requests, p.request(rb))
	}
	if len(it.Requests) == 0 {
		p.errorf(b.DefRange, "Missing requests", "iterations needs at least one request { path = \"/...\" } block")
	} else if it.Loops > math.MaxInt32/len(it.Requests) {
		// a user's request count (PerUser) must not overflow an int anywhere
		p.errorf(a["loops"].Expr.Range(), "Invalid loops", "loops × requests must stay below %d, got %d × %d", math.MaxInt32, it.Loops, len(it.Requests))
	}
	if app.Load.Path != "" || app.Load.Script != "" || app.Load.Workload != "" {
		p.errorf(b.DefRange, "Conflicting load", "iterations sends its request blocks; drop path, script and workload")
	}
	if threads >= 1 {
		// every user is one connection on a thread of its own, so a per-thread
		// sequence is a per-user one
		app.Load.Threads, app.Load.Connections = threads, threads
		app.Users = []int{threads}
	}
}

var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

func (p *parser) request(b *hcl.Block) Request {
	content, diags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "method"}, {Name: "path", Required: true}, {Name: "body"}, {Name: "content_type"},
	}})
	p.diags = append(p.diags, diags...)
	a := content.Attributes
	r := Request{Method: "GET"}
	if p.decode(a, "method", &r.Method) && !slices.Contains(methods, r.Method) {
		p.errorf(a["method"].Expr.Range(), "Invalid method", "method must be one of %s; got %q", strings.Join(methods, ", "), r.Method)
	}
	if p.decode(a, "path", &r.Path) && !strings.HasPrefix(r.Path, "/") {
		p.errorf(a["path"].Expr.Range(), "Invalid path", "path must start with \"/\", got %q", r.Path)
	}
	p.decode(a, "body", &r.Body)
	p.decode(a, "content_type", &r.ContentType)
	if r.Body != "" && r.ContentType == "" {
		r.ContentType = "application/json"
	}
	return r
}

// stepTimes are a step's warm-up and measured period: an iterations step
// has no warm-up (JMeter's had none) and runs until its users are done,
// bounded by max_duration or the sweep's duration; a step with phases has
// none either and runs its phases.
func stepTimes(s *Sweep, l Load) (warmup, duration time.Duration) {
	if len(l.Phases) > 0 {
		// the phases are the whole run; a leading pad is the spec's own
		return 0, PhasesDuration(l.Phases)
	}
	if l.Kind != LoadIterations {
		return s.Warmup, s.Duration
	}
	if l.Iterations.MaxDuration > 0 {
		return 0, l.Iterations.MaxDuration
	}
	return 0, s.Duration
}
