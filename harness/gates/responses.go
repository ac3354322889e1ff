package gates

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// BodyReference is the mean body an endpoint's responses under load are
// held to, and where it was measured.
type BodyReference struct {
	Mean   float64
	Source string
}

// BodyReferences are the references by endpoint label.
type BodyReferences map[string]BodyReference

// LowerLevel is one step's per-endpoint bodies, measured at a lower level
// of the same configuration and repetition than the step judged.
type LowerLevel struct {
	Step      string
	Endpoints []results.EndpointStats
}

// BodyReferencesFor picks each endpoint's reference: its mean at the lowest
// level measured below this one, else in this run's warm-up (at the same
// rate, but before the measurement), else in the opening responses of the
// measured window (a run without warm-up, such as an iterations step).
// The first of these that saw the endpoint complete a response wins.
func BodyReferencesFor(lower *LowerLevel, res *loadgen.Result) BodyReferences {
	refs := BodyReferences{}
	add := func(b loadgen.EndpointBodies, source string) {
		if _, ok := refs[b.Label]; ok {
			return
		}
		if mean, ok := b.MeanBody(); ok {
			refs[b.Label] = BodyReference{Mean: mean, Source: source}
		}
	}
	if lower != nil {
		for _, e := range lower.Endpoints {
			add(loadgen.EndpointBodies{Label: e.Name, Completed: e.Completed, BodyBytes: e.BodyBytes}, "at the lower level "+lower.Step)
		}
	}
	if res.Warmup != nil {
		for _, b := range res.Warmup.Endpoints {
			add(b, "in the warm-up")
		}
	}
	for _, b := range res.Opening {
		add(b, "in the opening responses")
	}
	return refs
}

// ResponsesGate holds every endpoint's mean response body under load to at
// least half of its reference (an emptied cache or store shows as short
// answers), and the endpoint the probe of probePath covers to half of the
// probe's body too. An endpoint that completed no response while others
// answered failed too. Failing it is a measurement of the application (broken), as is any
// other way of failing under load. Headers are not counted: they alone
// would fill half of a small body.
func ResponsesGate(probePath string, probeBody int, refs BodyReferences, res *loadgen.Result) results.Gate {
	g := results.Gate{Name: Responses, Breaks: true}
	var shrunk, silent, held, unreferenced []string
	answered := false
	for _, e := range res.Endpoints {
		if e.Completed == 0 {
			silent = append(silent, e.Label+": no completed response")
			continue
		}
		answered = true
		mean := float64(e.BodyBytes) / float64(e.Completed)
		text := fmt.Sprintf("%s: %.0f body bytes on average", e.Label, mean)
		var under, over []string
		hold := func(bound float64, name string) {
			if mean < bound/2 {
				under = append(under, name)
			} else {
				over = append(over, name)
			}
		}
		if ref, ok := refs[e.Label]; ok {
			hold(ref.Mean, fmt.Sprintf("%.0f %s", ref.Mean, ref.Source))
		}
		if probeBody > 0 && probeCovers(probePath, e.Label) {
			hold(float64(probeBody), fmt.Sprintf("probe %d", probeBody))
		}
		switch {
		case len(under) > 0:
			text += ", under half of " + strings.Join(under, " and ")
			if len(over) > 0 {
				text += " (reference " + strings.Join(over, ", ") + ")"
			}
			shrunk = append(shrunk, text)
		case len(over) > 0:
			held = append(held, text+" (reference "+strings.Join(over, ", ")+")")
		default:
			unreferenced = append(unreferenced, text+" (no reference: not answered at a lower level, in a warm-up or an opening)")
		}
	}
	all := append(append(append(append([]string{}, shrunk...), silent...), held...), unreferenced...)
	switch {
	case len(shrunk) > 0:
		g.Detail = "responses shrank under load: " + strings.Join(all, "; ")
	case len(silent) > 0 && answered:
		g.Detail = "an endpoint stopped answering while the others answered: " + strings.Join(all, "; ")
	case len(held) == 0:
		// with nothing answered the SLO's error rule judges the step
		g.NotChecked = true
		g.Detail = "no endpoint's responses could be held to a reference"
		if len(all) > 0 {
			g.Detail += ": " + strings.Join(all, "; ")
		}
	default:
		g.Passed = true
		g.Detail = strings.Join(all, "; ")
	}
	return g
}

// probeCovers reports whether an endpoint label is the probe's request: a
// GET of its path, once the generator's {id} placeholders are applied to both
// (the probe's /books/2 and a script's "GET /books/1" are both
// "GET /books/{id}"). A label without a method is a GET's.
func probeCovers(probePath, label string) bool {
	method, path, found := strings.Cut(label, " ")
	if !found {
		method, path = "GET", label
	}
	return method == "GET" && loadgen.EndpointLabel("GET", path) == loadgen.EndpointLabel("GET", probePath)
}
