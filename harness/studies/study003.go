package studies

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orchbench/orchbench/harness/results"
)

// Study 003 (FIUBA 75.73 TP2): the highest arrival rate each route of a
// Node web tier holds, with 1 and 3 instances, under Artillery phases (pad,
// ramp to the rate, hold, pad) at 10, 50, 100 and 500 per second. The
// published summary (../shared/STUDIES.md) gives bounds, not measurements:
// root up to 300 with one instance and 500 with three; remote under 10;
// alternate up to 45 and 80; cached up to 100.
var published003 = map[string]map[string]string{
	"root":      {"1": "≤ 300", "3": "500"},
	"remote":    {"1": "< 10", "3": "< 10"},
	"alternate": {"1": "≤ 45", "3": "≤ 80"},
	"cached":    {"1": "≤ 100", "3": "≤ 100"},
}

var routeOrder003 = map[string]int{"root": 0, "remote": 1, "alternate": 2, "cached": 3}

type key003 struct{ route, instances, keys, orchestrator, load string }

type repKey003 struct {
	key key003
	rep int
}

type level003 struct {
	rate   float64
	broken bool
}

func study003(s sweep) *Table {
	byRep := map[repKey003][]level003{}
	for _, m := range s.steps {
		k := key003{
			route:        route003(orDefault(varString(m.plan.Vars, "route"), m.plan.Load.Path)),
			instances:    instanceCount(m, "3"), // packs/frontier's horizontal: 3, the study's second shape
			orchestrator: m.plan.Orchestrator,
			load:         m.plan.Load.RunnerName(),
		}
		if k.route == "cached" {
			k.keys = varString(m.plan.Vars, "cache_keys")
		}
		rk := repKey003{key: k, rep: m.plan.Rep}
		byRep[rk] = append(byRep[rk], level003{rate: m.plan.OfferedRPS, broken: m.result.Outcome == results.OutcomeBroken})
	}
	held := map[key003][]float64{}
	unbroken := map[key003]int{}
	for rk, levels := range byRep {
		sort.Slice(levels, func(i, j int) bool { return levels[i].rate < levels[j].rate })
		h, broke := 0.0, false
		for _, l := range levels {
			if l.broken {
				broke = true
				break
			}
			h = l.rate
		}
		if !broke {
			unbroken[rk.key]++
		}
		held[rk.key] = append(held[rk.key], h)
	}
	t := &Table{
		Study:   "003",
		Title:   "Study 003: the highest rate (requests/s) each route holds, with 1 and 3 web instances",
		Columns: []string{"route", "instances", "cache keys", "orchestrator", "load", "highest rate held", "repetitions never broken", "published"},
		Source:  "FIUBA 75.73 TP2 (../shared/STUDIES.md, study 003): AWS, a Node/Express tier behind an ELB, Artillery phases at 10/50/100/500 rps",
		Notes: []string{
			"a repetition holds a rate when its step at that rate met the SLO and every lower one did; 0 means it broke at its lowest rate. A repetition that never broke holds at least the highest rate tried: that figure is a lower bound.",
			"load: the study's Artillery, or orchbench's generator on the same phases (the same arrival rate over time); Artillery opens a connection per arrival, ours keeps its connections.",
			"the study published bounds from its Artillery summaries, not measured maxima; its remote service, Lambda and ElastiCache are ours here (a single-worker Python service, a function pool with a concurrency limit, Redis).",
			"one 2-core machine runs the tier, the remote service, the pool, Redis, the orchestrator and the load generator; resource_scale shrinks the tier's CPU in proportion.",
		},
	}
	keys := make([]key003, 0, len(held))
	for k := range held {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch {
		case a.route != b.route:
			return routeRank003(a.route) < routeRank003(b.route)
		case a.instances != b.instances:
			return configOrder(a.instances) < configOrder(b.instances)
		case a.keys != b.keys:
			return configOrder(a.keys) < configOrder(b.keys)
		case a.orchestrator != b.orchestrator:
			return a.orchestrator < b.orchestrator
		}
		return a.load < b.load
	})
	for _, k := range keys {
		pub := published003[k.route][k.instances]
		if pub == "" {
			pub = "-"
		}
		keysText := k.keys
		if keysText == "" {
			keysText = "-"
		}
		reps := held[k]
		t.Rows = append(t.Rows, []string{
			k.route, k.instances, keysText, k.orchestrator, k.load,
			fmtEstimate(results.MedianCI(reps), 0), fmt.Sprintf("%d of %d", unbroken[k], len(reps)), pub,
		})
	}
	if s.invalid > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d invalid steps are left out; a repetition is judged on its valid steps.", s.invalid))
	}
	return t
}

// route003 names a step's route by its path (packs/frontier's route
// variable, which sets the load path, else the spec's path): "/" is the
// root.
func route003(path string) string {
	p := path
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p = strings.Trim(p, "/")
	if p == "" {
		return "root"
	}
	return p
}

func routeRank003(route string) string {
	if r, ok := routeOrder003[route]; ok {
		return fmt.Sprintf("0%d", r)
	}
	return "1" + route
}
