package gates

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

func endpoint(label string, completed, meanBody int64) loadgen.EndpointResult {
	return loadgen.EndpointResult{Label: label, Count: completed, Completed: completed, BodyBytes: completed * meanBody}
}

func bodies(label string, completed, meanBody int64) loadgen.EndpointBodies {
	return loadgen.EndpointBodies{Label: label, Completed: completed, BodyBytes: completed * meanBody}
}

func wantGate(t *testing.T, g results.Gate, passed, notChecked bool, details ...string) {
	t.Helper()
	if g.Name != Responses || !g.Breaks || g.Passed != passed || g.NotChecked != notChecked {
		t.Fatalf("gate = %+v, want passed=%v notChecked=%v", g, passed, notChecked)
	}
	for _, d := range details {
		if !strings.Contains(g.Detail, d) {
			t.Fatalf("detail %q lacks %q", g.Detail, d)
		}
	}
}

func TestResponsesGateHoldsEveryEndpointToItsReference(t *testing.T) {
	probe := "/wrk2-api/home-timeline/read?user_id=1&start=0&stop=10"
	warm := &loadgen.WarmupSummary{Endpoints: []loadgen.EndpointBodies{
		bodies("/wrk2-api/home-timeline/read", 60, 11000), bodies("/wrk2-api/post/compose", 10, 20)}}
	res := &loadgen.Result{Warmup: warm, Endpoints: []loadgen.EndpointResult{
		endpoint("/wrk2-api/home-timeline/read", 600, 11000), endpoint("/wrk2-api/post/compose", 100, 20)}}
	wantGate(t, ResponsesGate(probe, 11700, BodyReferencesFor(nil, res), res), true, false,
		"/wrk2-api/home-timeline/read: 11000 body bytes on average (reference 11000 in the warm-up, probe 11700)",
		"/wrk2-api/post/compose: 20 body bytes on average (reference 20 in the warm-up)")

	// the empty timelines of the testbed we replace
	res.Endpoints[0] = endpoint("/wrk2-api/home-timeline/read", 600, 200)
	wantGate(t, ResponsesGate(probe, 11700, BodyReferencesFor(nil, res), res), false, false,
		"responses shrank under load: /wrk2-api/home-timeline/read: 200 body bytes on average, under half of 11000 in the warm-up and probe 11700")

	// an endpoint the probe does not cover is held to its own warm-up
	res.Endpoints[0] = endpoint("/wrk2-api/home-timeline/read", 600, 11000)
	res.Endpoints[1] = endpoint("/wrk2-api/post/compose", 100, 3)
	wantGate(t, ResponsesGate(probe, 11700, BodyReferencesFor(nil, res), res), false, false,
		"/wrk2-api/post/compose: 3 body bytes on average, under half of 20 in the warm-up")
}

// A small app: 150 bytes on the wire are headers plus a 44-byte body.
// Counting headers, an empty body (~110 header bytes) would pass.
func TestResponsesGateCountsBodiesNotHeaders(t *testing.T) {
	empty := &loadgen.Result{Endpoints: []loadgen.EndpointResult{{Label: "GET /", Count: 10, Completed: 10, Bytes: 10 * 110}}}
	wantGate(t, ResponsesGate("/?n=1000", 44, nil, empty), false, false, "GET /: 0 body bytes on average, under half of probe 44")
}

// Study 004: a script labels requests as sent ("GET /books/1") and the
// probe asks for /books/2; there is no warm-up and one level, so the
// opening responses are every endpoint's reference, and the probe's body
// holds the GET by id (not the PATCH of the same path).
func TestResponsesGateIterationsOpening(t *testing.T) {
	probe := "/books/2"
	res := &loadgen.Result{
		Endpoints: []loadgen.EndpointResult{endpoint("GET /books", 100, 9000), endpoint("GET /books/1", 100, 76),
			endpoint("GET /cpu-intensive?num=8", 100, 30), endpoint("PATCH /books/1", 100, 2), endpoint("POST /books", 100, 80)},
		Opening: []loadgen.EndpointBodies{bodies("GET /books", 15, 8000), bodies("GET /books/1", 15, 76),
			bodies("GET /cpu-intensive?num=8", 15, 30), bodies("PATCH /books/1", 15, 2), bodies("POST /books", 15, 80)},
	}
	wantGate(t, ResponsesGate(probe, 76, BodyReferencesFor(nil, res), res), true, false,
		"GET /books: 9000 body bytes on average (reference 8000 in the opening responses)",
		"GET /books/1: 76 body bytes on average (reference 76 in the opening responses, probe 76)",
		"GET /cpu-intensive?num=8: 30 body bytes on average (reference 30 in the opening responses)",
		"PATCH /books/1: 2 body bytes on average (reference 2 in the opening responses)",
		"POST /books: 80 body bytes on average (reference 80 in the opening responses)")

	// {"error":"..."} is short: the probe's body says so even when the
	// opening was already short
	res.Endpoints[1] = endpoint("GET /books/1", 100, 17)
	res.Opening[1] = bodies("GET /books/1", 15, 17)
	wantGate(t, ResponsesGate(probe, 76, BodyReferencesFor(nil, res), res), false, false,
		"GET /books/1: 17 body bytes on average, under half of probe 76 (reference 17 in the opening responses)")
}

func TestResponsesGateSilentEndpoint(t *testing.T) {
	res := &loadgen.Result{
		Endpoints: []loadgen.EndpointResult{endpoint("GET /a", 50, 100), {Label: "GET /b", Count: 50, Errors: 50}},
		Opening:   []loadgen.EndpointBodies{bodies("GET /a", 3, 100)},
	}
	wantGate(t, ResponsesGate("/a", 100, BodyReferencesFor(nil, res), res), false, false,
		"an endpoint stopped answering while the others answered", "GET /b: no completed response", "GET /a: 100 body bytes on average")
	// nothing answered at all: the SLO's error rule says it
	res.Endpoints[0] = loadgen.EndpointResult{Label: "GET /a", Count: 50, Errors: 50}
	wantGate(t, ResponsesGate("/a", 100, BodyReferencesFor(nil, res), res), false, true,
		"no endpoint's responses could be held to a reference", "GET /a: no completed response")
}

// A tool's result has neither warm-up nor opening per endpoint: without a
// lower level nothing can hold its endpoints, and the gate says so.
func TestResponsesGateWithoutReference(t *testing.T) {
	res := &loadgen.Result{Endpoints: []loadgen.EndpointResult{endpoint("GET /other", 10, 10)}}
	wantGate(t, ResponsesGate("/", 44, BodyReferencesFor(nil, res), res), false, true,
		"GET /other: 10 body bytes on average (no reference")
}

func TestResponsesGateLowerLevelFirst(t *testing.T) {
	lower := &LowerLevel{Step: "app-nomad-v-r100-rep1", Endpoints: []results.EndpointStats{{Name: "GET /feed", Completed: 100, BodyBytes: 100 * 5000}}}
	res := &loadgen.Result{
		Endpoints: []loadgen.EndpointResult{endpoint("GET /feed", 100, 2000), endpoint("GET /new", 100, 40)},
		// the warm-up at this level already ran on the shrunk store
		Warmup: &loadgen.WarmupSummary{Endpoints: []loadgen.EndpointBodies{bodies("GET /feed", 10, 2000), bodies("GET /new", 10, 40)}},
	}
	refs := BodyReferencesFor(lower, res)
	if refs["GET /new"].Source != "in the warm-up" {
		t.Fatalf("an endpoint the lower level did not send falls back to the warm-up: %+v", refs)
	}
	wantGate(t, ResponsesGate("/health", 2, refs, res), false, false,
		"GET /feed: 2000 body bytes on average, under half of 5000 at the lower level app-nomad-v-r100-rep1",
		"GET /new: 40 body bytes on average (reference 40 in the warm-up)")
}

// sized is an endpoint's bodies of the given sizes, with their squares
// counted as the generator counts them.
func sized(label string, sizes ...int64) loadgen.EndpointBodies {
	b := loadgen.EndpointBodies{Label: label, Completed: int64(len(sizes))}
	for _, s := range sizes {
		b.BodyBytes += s
		b.BodySquares += float64(s) * float64(s)
	}
	return b
}

func repeat(times int, sizes ...int64) []int64 {
	var out []int64
	for range times {
		out = append(out, sizes...)
	}
	return out
}

// DeathStarBench's user-timeline reads start at a random offset of 0-100
// in timelines of about ten posts: most answers are empty pages, a few
// are full ones. Two small samples of that differ by half with nothing
// wrong (a lower level's 18 reads and this level's 36, as at 5 and 10 rps
// of the mixed workload); many reads that all came back empty did shrink.
func TestResponsesGateAllowsForTheSpreadOfSizes(t *testing.T) {
	label := "/wrk2-api/user-timeline/read"
	lowerBodies := sized(label, append(repeat(3, 3100), repeat(15, 2)...)...) // mean 518
	lower := &LowerLevel{Step: "sn-nomad-baseline-r5-rep1", Endpoints: []results.EndpointStats{
		{Name: label, Completed: lowerBodies.Completed, BodyBytes: lowerBodies.BodyBytes, BodySquares: lowerBodies.BodySquares}}}
	load := sized(label, append(repeat(2, 3100), repeat(34, 2)...)...) // mean 174: under half of 518
	res := &loadgen.Result{Endpoints: []loadgen.EndpointResult{{Label: label, Count: load.Completed, Completed: load.Completed, BodyBytes: load.BodyBytes, BodySquares: load.BodySquares, BodyMax: 3100}}}
	wantGate(t, ResponsesGate("/wrk2-api/home-timeline/read", 12000, BodyReferencesFor(lower, res), res), true, false,
		label+": 174 body bytes on average (reference 518 at the lower level sn-nomad-baseline-r5-rep1, within 3 standard errors")

	// the same spread at the lower level, and 400 reads that all came back empty
	empty := sized(label, repeat(400, 2)...)
	res.Endpoints[0] = loadgen.EndpointResult{Label: label, Count: empty.Completed, Completed: empty.Completed, BodyBytes: empty.BodyBytes, BodySquares: empty.BodySquares, BodyMax: 2}
	wantGate(t, ResponsesGate("/wrk2-api/home-timeline/read", 12000, BodyReferencesFor(lower, res), res), false, false,
		"responses shrank under load: "+label+": 2 body bytes on average, under half of 518 at the lower level sn-nomad-baseline-r5-rep1")

	// as few empty answers as the step had reads are no evidence yet: the
	// lower level's few full pages could have been missed by chance
	few := sized(label, repeat(36, 2)...)
	res.Endpoints[0] = loadgen.EndpointResult{Label: label, Count: few.Completed, Completed: few.Completed, BodyBytes: few.BodyBytes, BodySquares: few.BodySquares, BodyMax: 2}
	wantGate(t, ResponsesGate("/wrk2-api/home-timeline/read", 12000, BodyReferencesFor(lower, res), res), true, false,
		label+": 2 body bytes on average (reference 518 at the lower level sn-nomad-baseline-r5-rep1, within 3 standard errors")

	// a generator that does not count squares (a study tool) is held to
	// half of the mean alone, as before
	res.Endpoints[0] = loadgen.EndpointResult{Label: label, Count: load.Completed, Completed: load.Completed, BodyBytes: load.BodyBytes}
	wantGate(t, ResponsesGate("/wrk2-api/home-timeline/read", 12000, BodyReferencesFor(lower, res), res), false, false,
		label+": 174 body bytes on average, under half of 518 at the lower level")
}

func TestBodyVariance(t *testing.T) {
	if v, ok := sized("GET /", 2, 4, 6).BodyVariance(); !ok || v < 2.66 || v > 2.67 {
		t.Fatalf("variance of 2, 4, 6: %v, %v", v, ok)
	}
	if v, ok := sized("GET /", 0, 0).BodyVariance(); !ok || v != 0 {
		t.Fatalf("empty bodies have no spread, and it is known: %v, %v", v, ok)
	}
	if _, ok := bodies("GET /", 10, 44).BodyVariance(); ok {
		t.Fatal("bodies counted without squares have an unknown spread")
	}
}
