package results

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/harness/experiment"
)

// Rules of the SLO, as reported in LevelStats.Rules and BreakingPoint.Rules.
const (
	RuleLatency    = "p99"        // median corrected p99 above slo.p99_ms
	RuleThroughput = "throughput" // median achieved below min_achieved_ratio × offered
	RuleErrors     = "errors"     // errors/requests above max_error_ratio
	RuleResponses  = "responses"  // responses shrank under load in most repetitions
	// RuleGates: most repetitions were broken by a gate other than the
	// SLO's and the responses' (task events: an OOM kill, a restart), the
	// ones that broke at a lower level counting with them. Early stop and
	// the sustained levels already count such a repetition as broken.
	RuleGates = "gates"
	// RuleBrokenReps: most repetitions were broken, here by any gate or at
	// a lower level, though no rule above holds for the level: each broke
	// for its own reason, or they all broke below under an SLO that has no
	// rule the missing figures could break (closed loop without p99).
	RuleBrokenReps = "broken-reps"
)

// GateResponses is the check that responses under load keep the probe's
// size; GateSLO the check of one step against the SLO. Both are judged
// again on the level's medians, so RuleGates leaves them out.
const (
	GateResponses = "responses"
	GateSLO       = "slo"
)

// LevelStats aggregates the repetitions of one configuration at one load
// level.
type LevelStats struct {
	App          string  `json:"app"`
	Orchestrator string  `json:"orchestrator"`
	Variant      string  `json:"variant"`
	OfferedRPS   float64 `json:"offered_rps"`
	Users        int     `json:"users,omitempty"`
	// Measured counts the repetitions whose figures enter the estimates
	// (outcome valid or broken), Broken those of them that were broken.
	// Skipped repetitions broke at a lower level and were not run: they
	// count as broken here, with the worst figures. Invalid ones are out.
	Measured int `json:"measured"`
	Broken   int `json:"broken"`
	Skipped  int `json:"skipped,omitempty"`
	Invalid  int `json:"invalid"`
	// Corrected latency percentiles (ms) and achieved throughput (req/s),
	// over the measured repetitions.
	P50      Estimate `json:"p50_ms"`
	P90      Estimate `json:"p90_ms"`
	P99      Estimate `json:"p99_ms"`
	P999     Estimate `json:"p999_ms"`
	Achieved Estimate `json:"achieved_rps"`
	// QPSPerCore is achieved rps per core the measured service used, over
	// the repetitions that know it and in which the service used at least
	// MinRatioCores; ServiceCores is what it used.
	QPSPerCore   Estimate `json:"qps_per_core"`
	ServiceCores Estimate `json:"service_cores"`
	// QPSPerAppCore is achieved rps per core every task of the application
	// used (AppCores, of which DatastoreCores in its datastores), over the
	// repetitions in which they used at least MinRatioCores.
	QPSPerAppCore  Estimate `json:"qps_per_app_core"`
	AppCores       Estimate `json:"app_cores"`
	DatastoreCores Estimate `json:"datastore_cores"`
	// ErrorRatio pools the measured repetitions: Σerrors / Σrequests.
	ErrorRatio float64 `json:"error_ratio"`
	// Rules lists the rules this level breaks (the SLO's, RuleResponses,
	// RuleGates, RuleBrokenReps), with Details explaining them.
	Rules   []string `json:"rules,omitempty"`
	Details []string `json:"details,omitempty"`
}

// Configuration is app-orchestrator-variant.
func (l LevelStats) Configuration() string { return l.App + "-" + l.Orchestrator + "-" + l.Variant }

// Level is the level label, "r400" or "u16".
func (l LevelStats) Level() string {
	return experiment.Step{OfferedRPS: l.OfferedRPS, Users: l.Users}.Level()
}

// Breaks reports whether any rule fired at this level.
func (l LevelStats) Breaks() bool { return len(l.Rules) > 0 }

// HasData reports whether anything is known of the level: a measurement,
// or repetitions that broke below it.
func (l LevelStats) HasData() bool { return l.Measured+l.Skipped > 0 }

// Summarize groups steps by configuration and level, ordered by app,
// orchestrator, variant, then ascending level.
func Summarize(steps []StepResult, slo experiment.SLO) []LevelStats {
	type key struct {
		app, orch, variant string
		rate               float64
		users              int
	}
	groups := map[key][]StepResult{}
	var keys []key
	for _, r := range steps {
		k := key{r.App, r.Orchestrator, r.Variant, r.OfferedRPS, r.Users}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch {
		case a.app != b.app:
			return a.app < b.app
		case a.orch != b.orch:
			return a.orch < b.orch
		case a.variant != b.variant:
			return a.variant < b.variant
		case a.rate != b.rate:
			return a.rate < b.rate
		}
		return a.users < b.users
	})
	out := make([]LevelStats, 0, len(keys))
	for _, k := range keys {
		l := LevelStats{App: k.app, Orchestrator: k.orch, Variant: k.variant, OfferedRPS: k.rate, Users: k.users}
		var p50, p90, p99, p999, ach, due []float64
		var perCore perCoreFigures
		var reqs, errs int64
		shrank := 0
		var gates gateBreaks
		var scaling recoveries
		for _, r := range groups[k] {
			switch {
			case r.Skipped:
				l.Skipped++
				continue
			case !r.Measured():
				l.Invalid++
				continue
			}
			l.Measured++
			if r.Outcome == OutcomeBroken {
				l.Broken++
			}
			if r.failed(GateResponses) {
				shrank++
			}
			gates.add(r)
			if r.Scaling != nil {
				scaling.add(r)
			}
			p50 = append(p50, r.Corrected.P50)
			p90 = append(p90, r.Corrected.P90)
			p99 = append(p99, r.Corrected.P99)
			p999 = append(p999, r.Corrected.P999)
			ach = append(ach, r.AchievedRPS)
			due = append(due, r.dueRPS())
			perCore.add(r)
			reqs += r.Requests
			errs += r.Errors
		}
		l.P50, l.P90, l.P99, l.P999, l.Achieved = MedianCI(p50), MedianCI(p90), MedianCI(p99), MedianCI(p999), MedianCI(ach)
		perCore.fill(&l)
		if reqs > 0 {
			l.ErrorRatio = float64(errs) / float64(reqs)
		}
		if l.HasData() {
			l.Rules, l.Details = l.check(slo, due, p99, ach, shrank, gates, scaling)
		}
		out = append(out, l)
	}
	return out
}

// check applies the rules to a level. A repetition skipped above its own
// break enters the medians as the worst case (infinite p99, nothing
// achieved): dropping it would leave only the repetitions that held, and
// the median breaking point would come out a level too high.
//
// A level of scaling steps is judged by their recovery instead of the SLO
// on its medians (RuleRecovery); the other rules hold as for any level.
func (l LevelStats) check(slo experiment.SLO, due, p99, achieved []float64, shrank int, gates gateBreaks, scaling recoveries) (rules, details []string) {
	if l.Measured > 0 && scaling.steps == l.Measured {
		rules, details = scaling.rule(l.Measured+l.Skipped, l.Skipped)
		return l.checkGates(rules, details, shrank, gates)
	}
	var dueRate float64
	if len(due) > 0 {
		dueRate = median(due)
	} else {
		dueRate = l.OfferedRPS
	}
	censoredP99, censoredAch := append([]float64(nil), p99...), append([]float64(nil), achieved...)
	for range l.Skipped {
		censoredP99 = append(censoredP99, math.Inf(1))
		censoredAch = append(censoredAch, 0)
	}
	rules, details = check(slo, dueRate, median(censoredP99), median(censoredAch), l.ErrorRatio)
	if l.Measured == 0 {
		// nothing ran here: the figures above are the worst case by
		// construction, and when the SLO has no rule they could break
		// (closed loop without p99) the level breaks all the same
		if len(rules) == 0 {
			rules = []string{RuleBrokenReps}
		}
		return rules, []string{fmt.Sprintf("all %d repetitions broke at a lower level", l.Skipped)}
	}
	if l.Skipped > 0 {
		for i := range details {
			details[i] += fmt.Sprintf(" (%d of %d repetitions broke at a lower level)", l.Skipped, l.Skipped+l.Measured)
		}
	}
	return l.checkGates(rules, details, shrank, gates)
}

// checkGates adds to a level's SLO rules those of its repetitions' gates.
func (l LevelStats) checkGates(rules, details []string, shrank int, gates gateBreaks) ([]string, []string) {
	reps := l.Measured + l.Skipped
	if 2*shrank > reps {
		rules = append(rules, RuleResponses)
		details = append(details, fmt.Sprintf("responses shrank under load in %d of %d repetitions", shrank, reps))
	}
	if gates.other > 0 && 2*(gates.other+l.Skipped) > reps {
		rules = append(rules, RuleGates)
		details = append(details, gates.otherDetail(reps, l.Skipped))
	}
	// Early stop and the sustained levels count every broken repetition;
	// so does the level, when nothing above has said it broke.
	if len(rules) == 0 && 2*(gates.broken+l.Skipped) > reps {
		rules = append(rules, RuleBrokenReps)
		details = append(details, gates.brokenDetail(reps, l.Skipped))
	}
	return rules, details
}

// failed reports whether the step's gate called name ran and failed.
func (r StepResult) failed(name string) bool {
	for _, g := range r.Gates {
		if g.Name == name && !g.Passed && !g.NotChecked {
			return true
		}
	}
	return false
}

// check applies the SLO to one set of figures.
func check(slo experiment.SLO, offered, p99, achieved, errRatio float64) (rules, details []string) {
	if slo.P99Ms > 0 && p99 > slo.P99Ms {
		rules = append(rules, RuleLatency)
		if math.IsInf(p99, 1) {
			details = append(details, fmt.Sprintf("p99 > %g ms", slo.P99Ms))
		} else {
			details = append(details, fmt.Sprintf("p99 %.1f ms > %g ms", p99, slo.P99Ms))
		}
	}
	// Closed loop has no offered rate, so no throughput target.
	if offered > 0 && achieved < slo.MinAchievedRatio*offered {
		rules = append(rules, RuleThroughput)
		details = append(details, fmt.Sprintf("achieved %.1f rps < %g × %.1f rps due", achieved, slo.MinAchievedRatio, offered))
	}
	if errRatio > slo.MaxErrorRatio {
		rules = append(rules, RuleErrors)
		details = append(details, fmt.Sprintf("error ratio %.4f > %g", errRatio, slo.MaxErrorRatio))
	}
	return rules, details
}

// Violations applies the SLO to a single step, for early stopping during a
// sweep. It returns the rules that fired and why; none means the step met it.
func Violations(r StepResult, slo experiment.SLO) (rules, details []string) {
	if r.Scaling != nil {
		return scalingViolations(r)
	}
	return check(slo, r.dueRPS(), r.Corrected.P99, r.AchievedRPS, r.ErrorRatio())
}

// BreakingPoint is where a configuration first broke its SLO.
type BreakingPoint struct {
	App          string `json:"app"`
	Orchestrator string `json:"orchestrator"`
	Variant      string `json:"variant"`
	// Reached is false when every measured level met the SLO.
	Reached bool `json:"reached"`
	// The lowest level that broke (when Reached) and what fired there.
	OfferedRPS float64  `json:"offered_rps,omitempty"`
	Users      int      `json:"users,omitempty"`
	Rules      []string `json:"rules,omitempty"`
	Details    []string `json:"details,omitempty"`
	// At is the stats of the breaking level; LastGood of the highest level
	// below it that met the SLO (nil if none).
	At       *LevelStats `json:"at,omitempty"`
	LastGood *LevelStats `json:"last_good,omitempty"`
	// MaxMeasured is the highest level with valid data.
	MaxMeasured *LevelStats `json:"max_measured,omitempty"`
	// Sustained is the highest level each repetition met before its own
	// first break (0 when it broke at its lowest level), as a median with
	// its interval; SustainedReps lists them by repetition. Unbroken counts
	// repetitions that never broke: their figure is only a lower bound.
	Sustained     Estimate  `json:"sustained"`
	SustainedReps []float64 `json:"sustained_reps,omitempty"`
	Unbroken      int       `json:"unbroken,omitempty"`
}

// Configuration is app-orchestrator-variant.
func (b BreakingPoint) Configuration() string { return b.App + "-" + b.Orchestrator + "-" + b.Variant }

// Level is the breaking level label, or "-" when not reached.
func (b BreakingPoint) Level() string {
	if !b.Reached {
		return "-"
	}
	return experiment.Step{OfferedRPS: b.OfferedRPS, Users: b.Users}.Level()
}

// BreakingPoints finds, per configuration, the lowest level (with valid
// data) whose medians break the SLO. Input is Summarize's output.
func BreakingPoints(levels []LevelStats) []BreakingPoint {
	var out []BreakingPoint
	idx := map[string]int{}
	for i := range levels {
		l := levels[i]
		j, ok := idx[l.Configuration()]
		if !ok {
			j = len(out)
			idx[l.Configuration()] = j
			out = append(out, BreakingPoint{App: l.App, Orchestrator: l.Orchestrator, Variant: l.Variant})
		}
		b := &out[j]
		if !l.HasData() {
			continue
		}
		if l.Measured > 0 {
			b.MaxMeasured = &levels[i]
		}
		if b.Reached {
			continue
		}
		if l.Breaks() {
			b.Reached = true
			b.OfferedRPS, b.Users = l.OfferedRPS, l.Users
			b.Rules, b.Details = l.Rules, l.Details
			b.At = &levels[i]
		} else {
			b.LastGood = &levels[i]
		}
	}
	return out
}

// SustainedText is the per-repetition sustained level for tables:
// "40 [30–40] (30 40 40 40 40)", with "≥" on repetitions that never broke.
func (b BreakingPoint) SustainedText() string {
	if b.Sustained.N == 0 {
		return "-"
	}
	reps := make([]string, len(b.SustainedReps))
	for i, x := range b.SustainedReps {
		reps[i] = strconv.FormatFloat(x, 'f', -1, 64)
	}
	text := fmt.Sprintf("%s (%s)", b.Sustained, strings.Join(reps, " "))
	if b.Unbroken > 0 {
		text += fmt.Sprintf(", %d of %d never broke: a lower bound", b.Unbroken, b.Sustained.N)
	}
	return text
}

func joinOr(ss []string, empty string) string {
	if len(ss) == 0 {
		return empty
	}
	return strings.Join(ss, "; ")
}

// dueRPS is what the throughput rule compares achieved with: the requests
// actually scheduled when known (exp arrivals make their number random),
// else the offered rate.
func (r StepResult) dueRPS() float64 {
	if r.DueRPS > 0 {
		return r.DueRPS
	}
	return r.OfferedRPS
}

// WithSustained fills each breaking point's per-repetition sustained level
// from the steps: a repetition is walked up its levels in order and stops
// at the first measured step that is broken. Invalid steps are passed
// over, as they say nothing about the configuration.
func WithSustained(bps []BreakingPoint, steps []StepResult, slo experiment.SLO) []BreakingPoint {
	type repKey struct {
		config string
		rep    int
	}
	byRep := map[repKey][]StepResult{}
	for _, st := range steps {
		if st.Measured() {
			k := repKey{st.Configuration(), st.Rep}
			byRep[k] = append(byRep[k], st)
		}
	}
	keys := make([]repKey, 0, len(byRep))
	for k := range byRep {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].config != keys[j].config {
			return keys[i].config < keys[j].config
		}
		return keys[i].rep < keys[j].rep
	})
	for i := range bps {
		b := &bps[i]
		b.SustainedReps, b.Unbroken = nil, 0
		for _, k := range keys {
			if k.config != b.Configuration() {
				continue
			}
			rs := byRep[k]
			sort.Slice(rs, func(i, j int) bool {
				return levelKey(rs[i].OfferedRPS, rs[i].Users) < levelKey(rs[j].OfferedRPS, rs[j].Users)
			})
			sustained, broke := 0.0, false
			for _, r := range rs {
				if rules, _ := Violations(r, slo); len(rules) > 0 || r.Outcome == OutcomeBroken {
					broke = true
					break
				}
				sustained = levelKey(r.OfferedRPS, r.Users)
			}
			if !broke {
				b.Unbroken++
			}
			b.SustainedReps = append(b.SustainedReps, sustained)
		}
		b.Sustained = MedianCI(b.SustainedReps)
	}
	return bps
}
