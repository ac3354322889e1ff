package loadgen

import (
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The warm-up keeps each endpoint's bodies apart from the measured ones:
// they are what the responses gate holds the measured bodies to.
func TestWarmupBodiesPerEndpoint(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, strings.Repeat("x", len(r.URL.Path)))
			})
			paths := []string{"/a", "/bbbb"}
			wl := WorkloadFunc(func(rng *rand.Rand) Request { return Request{Path: paths[rng.IntN(len(paths))]} })
			res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 200, Duration: 300 * time.Millisecond,
				Warmup: 300 * time.Millisecond, Workload: wl, Seed: 3, Engine: engine})
			if res.Warmup == nil || len(res.Warmup.Endpoints) != 2 {
				t.Fatalf("warm-up endpoints = %+v", res.Warmup)
			}
			var completed int64
			for _, e := range res.Warmup.Endpoints {
				size := int64(len(strings.TrimPrefix(e.Label, "GET ")))
				if e.Completed == 0 || e.BodyBytes != size*e.Completed {
					t.Fatalf("%s: %+v, want %d body bytes per response", e.Label, e, size)
				}
				completed += e.Completed
			}
			if completed != res.Warmup.Requests {
				t.Fatalf("warm-up endpoints count %d responses, the warm-up %d", completed, res.Warmup.Requests)
			}
		})
	}
}

// The opening is each endpoint's first responses on each thread, however
// the later ones turn out.
func TestOpeningBodies(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			var served atomic.Int64
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if served.Add(1) <= openingResponses {
					io.WriteString(w, strings.Repeat("x", 100))
					return
				}
				io.WriteString(w, "x") // the store emptied
			})
			res := runLoad(t, Config{URL: srv.URL + "/data", Threads: 1, Connections: 1, Rate: 100, Duration: 300 * time.Millisecond, Engine: engine})
			if len(res.Opening) != 1 || len(res.Endpoints) != 1 {
				t.Fatalf("opening %+v, endpoints %+v", res.Opening, res.Endpoints)
			}
			o, all := res.Opening[0], res.Endpoints[0]
			if o.Label != all.Label || o.Completed != openingResponses || o.BodyBytes != 100*openingResponses {
				t.Fatalf("opening = %+v, want the first %d responses of 100 bytes", o, openingResponses)
			}
			if mean, _ := o.MeanBody(); all.Completed <= openingResponses || float64(all.BodyBytes)/float64(all.Completed) >= mean/2 {
				t.Fatalf("the run's mean is not below the opening's: %+v against %+v", all, o)
			}
			// the spread the responses gate allows for: squares and the largest
			if v, ok := o.BodyVariance(); !ok || v != 0 || o.BodySquares != 100*100*openingResponses {
				t.Fatalf("opening of equal bodies: variance %v (%v), squares %v", v, ok, o.BodySquares)
			}
			small := all.Completed - openingResponses
			if all.BodyMax != 100 || all.BodySquares != float64(100*100*openingResponses+small) {
				t.Fatalf("run: max %d, squares %v; want 100 and %d", all.BodyMax, all.BodySquares, 100*100*openingResponses+small)
			}
		})
	}
}
