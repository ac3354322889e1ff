package sweep

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// The hotel reservation's probe asks for the three hotels near one point
// (520 bytes); its mixed workload searches at random points and dates, whose
// answers hold fewer hotels on average (~210 bytes, as much in the warm-up
// as under load). Held to half the probe's body every step broke with
// nothing wrong; the pack says its probe is no such reference, and each
// endpoint is held to its own reference only, which still catches answers
// that really shrank.
func TestProbeReferenceFollowsThePack(t *testing.T) {
	const probePath, probeBody = "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7867&lon=-122.4112", 520
	result := func(underLoad int64) *loadgen.Result {
		return &loadgen.Result{
			Warmup:    &loadgen.WarmupSummary{Endpoints: []loadgen.EndpointBodies{{Label: "/hotels", Completed: 30, BodyBytes: 30 * 214}}},
			Endpoints: []loadgen.EndpointResult{{Label: "/hotels", Count: 200, Completed: 200, BodyBytes: 200 * underLoad}},
		}
	}
	hotel := contract.App{ProbeNoLoadReference: true}
	own := &experiment.Probe{Path: probePath}
	for _, c := range []struct {
		name      string
		st        experiment.Step
		app       contract.App
		want      int
		underLoad int64
		passes    bool
		contains  string
	}{
		{"the pack's probe is a reference by default", experiment.Step{}, contract.App{}, probeBody, 200, false, "under half of probe 520"},
		{"the pack says it is none", experiment.Step{}, hotel, 0, 200, true, "/hotels: 200 body bytes on average (reference 214 in the warm-up)"},
		{"answers that really shrank still break", experiment.Step{}, hotel, 0, 44, false, "under half of 214 in the warm-up"},
		{"an experiment's own probe is its author's reference", experiment.Step{Probe: own}, hotel, probeBody, 200, false, "under half of probe 520"},
	} {
		got := probeReference(c.st, c.app, probeBody)
		if got != c.want {
			t.Errorf("%s: reference %d, want %d", c.name, got, c.want)
		}
		res := result(c.underLoad)
		g := gates.ResponsesGate(probePath, got, gates.BodyReferencesFor(nil, res), res)
		if g.Passed != c.passes || !strings.Contains(g.Detail, c.contains) {
			t.Errorf("%s: gate passed=%v %q, want passed=%v with %q", c.name, g.Passed, g.Detail, c.passes, c.contains)
		}
	}
}
