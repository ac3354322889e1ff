package results

import (
	"fmt"
	"sort"
	"strings"
)

// gateBreaks counts the broken repetitions of a level by the gates that
// broke them, and remembers each gate's first detail, so that a level's
// rule can say which gate broke how many repetitions and why.
type gateBreaks struct {
	// broken counts the measured repetitions that were broken, for any
	// reason; other those broken by a gate the level's medians do not judge
	// again (any failed gate with Breaks but the SLO's and the responses').
	broken, other int
	byGate        map[string]int
	first         map[string]string
	order         []string
}

// medianJudged reports whether the level's own rules judge gate's figures
// again (the SLO on medians, the responses on a majority).
func medianJudged(gate string) bool { return gate == GateSLO || gate == GateResponses }

// add counts r if it was broken.
func (g *gateBreaks) add(r StepResult) {
	if r.Outcome != OutcomeBroken || r.Skipped {
		return
	}
	g.broken++
	other := false
	for _, gate := range r.Gates {
		if gate.Passed || gate.NotChecked || !gate.Breaks {
			continue
		}
		if g.byGate == nil {
			g.byGate, g.first = map[string]int{}, map[string]string{}
		}
		if _, seen := g.byGate[gate.Name]; !seen {
			g.order = append(g.order, gate.Name)
			g.first[gate.Name] = fmt.Sprintf("%s (rep %d)", orNone(gate.Detail), r.Rep)
		}
		g.byGate[gate.Name]++
		other = other || !medianJudged(gate.Name)
	}
	if other {
		g.other++
	}
}

// otherDetail says which gates outside the SLO broke how many of the reps
// repetitions, with the first repetition's reason, and how many broke at a
// lower level: "task-events broke 3 of 5 repetitions: web OOM-killed (rep 2)".
func (g gateBreaks) otherDetail(reps, skipped int) string {
	var parts []string
	for _, n := range g.names() {
		if !medianJudged(n) {
			parts = append(parts, fmt.Sprintf("%s broke %d of %d repetitions: %s", n, g.byGate[n], reps, g.first[n]))
		}
	}
	if skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d broke at a lower level", skipped, reps))
	}
	return strings.Join(parts, "; ")
}

// brokenDetail says that most repetitions were broken though no single
// rule holds for the level: "2 of 3 repetitions broken (slo 1, responses
// 1), 1 at a lower level".
func (g gateBreaks) brokenDetail(reps, skipped int) string {
	text := fmt.Sprintf("%d of %d repetitions broken", g.broken+skipped, reps)
	var by []string
	for _, n := range g.names() {
		by = append(by, fmt.Sprintf("%s %d", n, g.byGate[n]))
	}
	if len(by) > 0 {
		text += " (" + strings.Join(by, ", ") + ")"
	}
	if skipped > 0 {
		text += fmt.Sprintf(", %d at a lower level", skipped)
	}
	return text
}

// names are the gates that broke a repetition, most repetitions first.
func (g gateBreaks) names() []string {
	names := append([]string(nil), g.order...)
	sort.SliceStable(names, func(i, j int) bool { return g.byGate[names[i]] > g.byGate[names[j]] })
	return names
}
