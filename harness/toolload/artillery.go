package toolload

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"path"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// Artillery runs study 003's tool headless: a generated script whose
// phases are the step's (pads, ramps, flat rates), each arrival a virtual
// user sending one GET of the step's path on a connection of its own,
// timed by a generated processor (artillery_processor.go) whose record
// the JSON report carries.
type Artillery struct{}

func init() { register(Artillery{}) }

func (Artillery) Name() string { return "artillery" }

// ResultFile is the report --output writes.
func (Artillery) ResultFile() string { return "result.json" }

// Slack: the window is Artillery's own phase events, which its timers run
// to their length; what it may fall short is the skew between its
// threads' clocks and messages (artilleryWindow), under a CPU cap a
// throttled period or a few.
func (Artillery) Slack() time.Duration { return 300 * time.Millisecond }

// MaxCores is 0 before a run: Artillery starts a worker thread per core of
// its node but one (at least one), so its ceiling is known from the run
// (MaxCoresOf).
func (Artillery) MaxCores() float64 { return 0 }

// MaxCoresOf is the worker threads that sent requests, each one
// JavaScript thread; the main thread only gathers their metrics.
func (Artillery) MaxCoresOf(res *loadgen.Result) float64 {
	if res == nil {
		return 0
	}
	return float64(res.Config.Threads)
}

// MemoryMiB: Node with Artillery's modules loaded in its main thread and
// again in each worker holds about 250 MiB before the first request,
// measured on Debian's Node 18; 256 would kill it.
func (Artillery) MemoryMiB() int { return 768 }

const (
	artilleryScript    = "artillery.json"
	artilleryWarmup    = "warmup.json"
	artilleryProcessor = "orchbench-artillery.js"
)

// artilleryDefaultTimeout is orchbench's generator's default, so that the
// two runners time out alike when the spec says nothing.
const artilleryDefaultTimeout = 2 * time.Second

// artilleryPhase is one phase of Artillery's script.
type artilleryPhase struct {
	Pause       int64    `json:"pause,omitempty"`
	Duration    int64    `json:"duration,omitempty"`
	ArrivalRate *float64 `json:"arrivalRate,omitempty"`
	RampTo      *float64 `json:"rampTo,omitempty"`
}

// artilleryPhases converts phases of whole seconds and whole arrivals per
// second, as Artillery counts them; anything else is refused.
func artilleryPhases(phases []loadgen.Phase) ([]artilleryPhase, error) {
	var out []artilleryPhase
	for i, p := range phases {
		if p.Dur <= 0 || p.Dur%time.Second != 0 {
			return nil, fmt.Errorf("artillery: phase %d lasts %s; Artillery runs whole seconds", i+1, p.Dur)
		}
		for _, r := range []float64{p.From, p.To} {
			if r < 0 || r != math.Round(r) {
				return nil, fmt.Errorf("artillery: phase %d asks %g arrivals/s; Artillery counts whole arrivals per second", i+1, r)
			}
		}
		secs := int64(p.Dur / time.Second)
		from, to := p.From, p.To
		switch {
		case from == 0 && to == 0:
			out = append(out, artilleryPhase{Pause: secs})
		case from == to:
			// A flat arrivalRate phase paces arrivals with a timer that spins
			// (measured: 0.8 core more over 10 s at 100/s, the same 1000
			// users); a ramp of equal ends sends the same arrivals each
			// second on plain timers, so the tool's CPU is its work.
			out = append(out, artilleryPhase{Duration: secs, ArrivalRate: &from, RampTo: &to})
		case to == 0:
			// its work split reads rampTo 0 as no ramp at all
			return nil, fmt.Errorf("artillery: phase %d ramps down to 0, which Artillery splits over its workers as a flat rate", i+1)
		default:
			out = append(out, artilleryPhase{Duration: secs, ArrivalRate: &from, RampTo: &to})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("artillery: no phases")
	}
	return out, nil
}

// artilleryScriptFor is a script of the phases against u: every virtual
// user GETs u's path once, timed by the processor, which the before hook
// starts watching the run from Artillery's main thread.
func artilleryScriptFor(u *url.URL, phases []artilleryPhase, timeout time.Duration) (string, error) {
	step := map[string]any{"url": u.RequestURI(), "beforeRequest": "orchbenchSend", "afterResponse": "orchbenchReceived"}
	script := map[string]any{
		"config": map[string]any{
			"target":    u.Scheme + "://" + u.Host,
			"phases":    phases,
			"http":      map[string]any{"timeout": timeout.Seconds()},
			"processor": "./" + artilleryProcessor,
		},
		"before":    map[string]any{"flow": []any{map[string]any{"function": "orchbenchWatch"}}},
		"scenarios": []any{map[string]any{"name": "GET " + u.RequestURI(), "flow": []any{map[string]any{"get": step}}}},
	}
	b, err := json.MarshalIndent(script, "", "  ")
	return string(b), err
}

func (Artillery) Files(req Request) (map[string]string, error) {
	u, err := url.Parse(req.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("artillery: bad URL %q", req.URL)
	}
	if len(req.Phases) == 0 {
		return nil, fmt.Errorf("artillery: no arrival phases; it runs open-loop rates, not %d users", req.Connections)
	}
	phases, err := artilleryPhases(req.Phases)
	if err != nil {
		return nil, err
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = artilleryDefaultTimeout
	}
	files := map[string]string{}
	if files[artilleryScript], err = artilleryScriptFor(u, phases, timeout); err != nil {
		return nil, err
	}
	if req.Warmup > 0 {
		// an unrecorded run at the rate, as long as the warm-up in whole seconds
		whole := (req.Warmup + time.Second - 1) / time.Second * time.Second
		warm, err := artilleryPhases([]loadgen.Phase{{Dur: whole, From: req.Rate, To: req.Rate}})
		if err != nil {
			return nil, fmt.Errorf("artillery warm-up: %w", err)
		}
		if files[artilleryWarmup], err = artilleryScriptFor(u, warm, timeout); err != nil {
			return nil, err
		}
	}
	var declared []int64
	for _, p := range req.Phases {
		declared = append(declared, p.Dur.Milliseconds())
	}
	files[artilleryProcessor] = artilleryProcessorSource(u.RequestURI(), phasesOffer(req.Phases), declared, timeout)
	return files, nil
}

// phasesOffer is what the phases offer in all: the integral of the
// schedule our generator would run them on.
func phasesOffer(phases []loadgen.Phase) float64 {
	sched := loadgen.ScheduleOf(phases)
	return sched.Hits(sched.Duration())
}

func (a Artillery) Command(req Request, in, out string) (warmup, run []string, err error) {
	if len(req.Phases) == 0 {
		return nil, nil, fmt.Errorf("artillery: no arrival phases; it runs open-loop rates, not %d users", req.Connections)
	}
	if req.Warmup > 0 {
		warmup = []string{"run", "--quiet", path.Join(in, artilleryWarmup)}
	}
	run = []string{"run", "--output", path.Join(out, a.ResultFile()), path.Join(in, artilleryScript)}
	return warmup, run, nil
}
