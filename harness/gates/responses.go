package gates

import (
	"fmt"
	"math"
	"strings"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// BodyReference is the mean body an endpoint's responses under load are
// held to, and where it was measured: with the spread of the sizes behind
// it (Spread false when unknown), so that a mean that is small by chance
// is not taken for a shrunk one.
type BodyReference struct {
	Mean     float64
	Variance float64
	Count    int64
	Spread   bool
	Source   string
}

// shrinkSignificance is how many standard errors a mean under load must
// lie below half of its reference to count as shrunk, where the spread of
// both is known. An endpoint whose answers vary widely by request (the
// social network's user timelines at random offsets are mostly empty
// pages, some full ones) has a mean that moves by half between small
// samples with nothing wrong; three standard errors keep that from
// breaking a step, while bodies that really emptied, many of them, still
// lie far below.
const shrinkSignificance = 3

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
			variance, spread := b.BodyVariance()
			refs[b.Label] = BodyReference{Mean: mean, Variance: variance, Count: b.Completed, Spread: spread, Source: source}
		}
	}
	if lower != nil {
		for _, e := range lower.Endpoints {
			add(loadgen.EndpointBodies{Label: e.Name, Completed: e.Completed, BodyBytes: e.BodyBytes, BodySquares: e.BodySquares}, "at the lower level "+lower.Step)
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
			name := fmt.Sprintf("%.0f %s", ref.Mean, ref.Source)
			if mean < ref.Mean/2 {
				if within := withinSpread(e, ref); within != "" {
					over = append(over, name+", "+within)
				} else {
					under = append(under, name)
				}
			} else {
				over = append(over, name)
			}
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

// withinSpread says why a mean under half of its reference is no evidence
// of shrunk responses, or "" when it is. Where the generator counted the
// bodies' squares on both sides, a mean within shrinkSignificance standard
// errors of the half may be chance; unless no response under load reached
// half of the reference mean, while the reference's own sizes say at
// least a share of its responses did (Paley-Zygmund: a share of at least
// mean²/(4·mean of squares) lies above half the mean), and that share
// missing from this many responses would be as unlikely as the three
// standard errors: many answers that all came back short did shrink.
func withinSpread(e loadgen.EndpointResult, ref BodyReference) string {
	load := loadgen.EndpointBodies{Label: e.Label, Completed: e.Completed, BodyBytes: e.BodyBytes, BodySquares: e.BodySquares}
	variance, ok := load.BodyVariance()
	if !ok || !ref.Spread || ref.Count == 0 {
		return ""
	}
	mean, _ := load.MeanBody()
	se := math.Sqrt(variance/float64(e.Completed) + ref.Variance/4/float64(ref.Count))
	if ref.Mean/2-mean >= shrinkSignificance*se {
		return ""
	}
	if float64(e.BodyMax) < ref.Mean/2 {
		squares := ref.Variance + ref.Mean*ref.Mean
		share := ref.Mean * ref.Mean / (4 * squares)
		if math.Pow(1-share, float64(e.Completed)) <= shrinkChance {
			return ""
		}
	}
	return fmt.Sprintf("within %g standard errors (%.0f bytes) of its half over %d and %d responses", float64(shrinkSignificance), se, ref.Count, e.Completed)
}

// shrinkChance is the one-sided chance of shrinkSignificance standard
// errors under a normal distribution.
var shrinkChance = 0.5 * math.Erfc(shrinkSignificance/math.Sqrt2)

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
