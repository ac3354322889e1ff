package experiment

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// pcgStream is the second PCG seed word. It is fixed so that the spec's one
// seed determines the order; changing it would reorder every recorded sweep.
const pcgStream = 0x6f72636862656e63 // "orchbenc"

// Plan expands the sweep into its steps in execution order.
//
// The order is random (seeded) so that slow drift of the machine — thermal
// state, page cache, a noisy neighbour — spreads over all configurations
// instead of biasing the ones that ran last. Two constraints shape it:
//
//   - With deploy = "per-configuration" the steps of one configuration run
//     together (configurations in random order), since each needs its own
//     deployment; with "per-step" all steps are shuffled together.
//   - With early_stop, each configuration's steps run in rounds, one per
//     repetition, rates ascending within a round, so the runner can skip the
//     higher rates of a configuration once a lower one broke. Under
//     "per-step" the configuration's steps are put in that order in the
//     positions the shuffle gave them, so configurations still interleave.
func Plan(s *Sweep) []Step {
	rng := rand.New(rand.NewPCG(s.Seed, pcgStream))
	var groups [][]Step
	for _, app := range s.Apps {
		for _, orch := range s.Orchestrators {
			for _, variant := range app.Variants {
				groups = append(groups, configurationSteps(s, app, orch, variant))
			}
		}
	}

	var steps []Step
	switch s.Deploy {
	case DeployPerStep:
		for _, g := range groups {
			steps = append(steps, g...)
		}
		rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
		if s.EarlyStop {
			// Keep the shuffled slots of each configuration, refill them in
			// round order.
			slots := map[string][]int{}
			for i, st := range steps {
				slots[st.Configuration()] = append(slots[st.Configuration()], i)
			}
			for _, g := range groups {
				ordered := roundOrder(g)
				for k, i := range slots[g[0].Configuration()] {
					steps[i] = ordered[k]
				}
			}
		}
		for i := range steps {
			steps[i].Redeploy = true
		}
	default:
		rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
		for _, g := range groups {
			if s.EarlyStop {
				g = roundOrder(g)
			} else {
				rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
			}
			g[0].Redeploy = true
			for i := range g {
				// a scaling step starts from the policy's min instances,
				// which only a fresh deployment guarantees
				g[i].Redeploy = g[i].Redeploy || g[i].Autoscale != nil
			}
			steps = append(steps, g...)
		}
	}
	for i := range steps {
		steps[i].Index = i
	}
	return steps
}

// configurationSteps lists one configuration's steps, levels × repetitions.
func configurationSteps(s *Sweep, app App, orch, variant string) []Step {
	vars := map[string]any{}
	maps.Copy(vars, app.Vars)
	maps.Copy(vars, app.VariantVars[variant])
	vars["variant"] = variant

	type level struct {
		rate  float64
		users int
	}
	var levels []level
	for _, r := range app.Rates {
		levels = append(levels, level{rate: r})
	}
	for _, u := range app.Users {
		levels = append(levels, level{users: u})
	}
	warmup, duration := stepTimes(s, app.Load)
	ha, haAt := app.HA, app.HAAt
	if ha == "" {
		ha, haAt = s.HA, s.HAAt
	}
	var out []Step
	for rep := 1; rep <= s.Repetitions; rep++ {
		for _, l := range levels {
			load := app.Load
			// a closed loop's threads share out its users, as wrk's share
			// its connections: one user is one thread's
			if l.users > 0 && load.Threads > l.users {
				load.Threads = l.users
			}
			out = append(out, Step{
				ID:           StepID(app.Name, orch, variant, l.rate, l.users, rep),
				App:          app.Name,
				Pack:         app.Pack,
				Orchestrator: orch,
				Variant:      variant,
				OfferedRPS:   l.rate,
				Users:        l.users,
				Rep:          rep,
				Vars:         maps.Clone(vars),
				Load:         load,
				Probe:        app.Probe,
				Fault:        app.Fault,
				Autoscale:    app.Autoscale,
				HA:           ha,
				HAAt:         haAt,
				Shipping:     app.Shipping,
				Warmup:       warmup,
				Duration:     duration,
				Cooldown:     s.Cooldown,
			})
		}
	}
	return out
}

// roundOrder sorts a configuration's steps by repetition, then load level.
func roundOrder(g []Step) []Step {
	out := append([]Step(nil), g...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rep != out[j].Rep {
			return out[i].Rep < out[j].Rep
		}
		if out[i].OfferedRPS != out[j].OfferedRPS {
			return out[i].OfferedRPS < out[j].OfferedRPS
		}
		return out[i].Users < out[j].Users
	})
	return out
}

// EstimatedDuration is the load time of the plan: warmup, measurement and
// cooldown of every step. Deployment time is not included; it depends on
// the cluster.
func EstimatedDuration(steps []Step) time.Duration {
	var d time.Duration
	for _, s := range steps {
		d += s.Warmup + s.Duration + s.Cooldown
	}
	return d
}

// FormatPlan writes the human-readable plan that --dry-run prints.
func FormatPlan(w io.Writer, s *Sweep, steps []Step) error {
	seedNote := ""
	if s.SeedGenerated {
		seedNote = " (generated; add seed = " + fmt.Sprint(s.Seed) + " to replay this order)"
	}
	deploys := 0
	for _, st := range steps {
		if st.Redeploy {
			deploys++
		}
	}
	fmt.Fprintf(w, "sweep %s (%s)\n", s.Name, s.File)
	if s.Description != "" {
		fmt.Fprintf(w, "  %s\n", s.Description)
	}
	fmt.Fprintf(w, "  seed %d%s\n", s.Seed, seedNote)
	fmt.Fprintf(w, "  %d steps, %d deployments (%s), %d repetitions, early stop %v\n", len(steps), deploys, s.Deploy, s.Repetitions, s.EarlyStop)
	fmt.Fprintf(w, "  each step: warmup %s, measure %s, cooldown %s; load time at least %s\n", s.Warmup, s.Duration, s.Cooldown, EstimatedDuration(steps))
	for _, app := range s.Apps {
		if len(app.Load.Phases) > 0 {
			fmt.Fprintf(w, "  app %s: no warm-up, measured over its %s of phases\n", app.Name, PhasesDuration(app.Load.Phases))
		}
	}
	fmt.Fprintf(w, "  SLO: p99 <= %s ms, achieved >= %g x offered, errors <= %g\n\n", sloP99(s.SLO.P99Ms), s.SLO.MinAchievedRatio, s.SLO.MaxErrorRatio)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSTEP\tDEPLOY\tLOAD\tVARS")
	for _, st := range steps {
		deploy := ""
		if st.Redeploy {
			deploy = "yes"
		}
		load := loadText(st)
		if st.ShippingOff() {
			load += ", shipping off"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", st.Index, st.ID, deploy, load, varsText(st.Vars))
	}
	return tw.Flush()
}

func sloP99(ms float64) string {
	if ms <= 0 {
		return "(none)"
	}
	return fmt.Sprint(ms)
}

func loadText(st Step) string {
	l := st.Load
	target := l.Path
	switch {
	case l.Workload != "":
		target = "workload " + l.Workload
	case l.Script != "":
		target = "script " + l.Script
	case l.Locustfile != "":
		target = "locustfile " + l.Locustfile
	case target == "":
		target = "(pack path)"
	}
	runner := ""
	if l.Runner != "" && l.Runner != RunnerOrchbench {
		runner = " (" + l.Runner + ")"
	}
	switch l.Kind {
	case LoadClosed:
		spawn := ""
		if l.SpawnRate > 0 {
			spawn = fmt.Sprintf(", spawned %g/s", l.SpawnRate)
		}
		return fmt.Sprintf("closed %d users think %s%s, %d thr, %s%s", st.Users, l.Think, spawn, l.Threads, target, runner)
	case LoadIterations:
		return fmt.Sprintf("iterations %d threads x %d loops x %d requests, timeout %s%s", st.Users, l.Iterations.Loops, len(l.Iterations.Requests), l.Timeout, runner)
	}
	rate := FormatRate(st.OfferedRPS) + " rps"
	if len(l.Phases) > 0 {
		rate = phasesLoadText(st)
	}
	if l.Runner == RunnerArtillery {
		// a virtual user per request, each on its own connection
		return fmt.Sprintf("%s, %s%s", rate, target, runner)
	}
	return fmt.Sprintf("%s %s, %d thr/%d conn, %s%s", rate, l.Distribution, l.Threads, l.Connections, target, runner)
}

func varsText(vars map[string]any) string {
	keys := slices.Sorted(maps.Keys(vars))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if k == "variant" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, vars[k]))
	}
	return strings.Join(parts, " ")
}
