package loadgen

import (
	"math/rand/v2"
	"testing"
	"time"
)

// On an idle machine the generator sends on time: its lag stays within
// a few ms. The machine this runs on is shared, so the bound is relative to
// the scheduling noise a probe goroutine sees during the same run (how late
// its 1 ms sleeps wake): lag p99 may not exceed 2 ms plus twice the probe's
// worst wake-up, about 4 ms on an idle machine. It would catch a generator
// that adds delay of its own (a systematic timer slack, a lock on the send
// path), not a busy machine. The test is not parallel, so the package's
// other tests do not count as noise.
func TestLagIsSmallWhenIdle(t *testing.T) {
	for _, engine := range engines {
		srv := newServer(t, nil)
		noise := newLagHist()
		stop := make(chan struct{})
		probed := make(chan struct{})
		go func() {
			defer close(probed)
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				time.Sleep(time.Millisecond)
				noise.RecordValue(lagUs(time.Since(t0) - time.Millisecond))
			}
		}()
		res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 4, Rate: 200, Duration: 500 * time.Millisecond, Engine: engine})
		close(stop)
		<-probed
		checkAccounting(t, res)
		g := res.Generator
		bound := 2000 + 2*noise.Max()
		t.Logf("%s: %s; scheduling noise p99 %dus, max %dus; bound %dus", engine, g, noise.ValueAtPercentile(99), noise.Max(), bound)
		want(t, engine+" lag samples", g.LagSamples, 100)
		if g.LagP99Us > bound || g.LagP50Us > g.LagP99Us || g.LagP99Us > g.LagMaxUs {
			t.Fatalf("%s: lag %+v, want p50 <= p99 <= max and p99 under %dus", engine, g, bound)
		}
		if g.CPUSeconds <= 0 || g.CPUCores <= 0 || g.CPUCores > 4 {
			t.Fatalf("%s: CPU %+v", engine, g)
		}
	}
}

// A generator too slow to build its requests (a workload taking 30 ms per
// request, against a 20 ms interval per connection) sends late although
// its connections are free: that is lag, and it must show as such, on a
// server that answers at once.
func TestLagShowsASlowGenerator(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, nil)
			slow := WorkloadFunc(func(*rand.Rand) Request {
				time.Sleep(30 * time.Millisecond)
				return Request{Path: "/"}
			})
			res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 100, Duration: time.Second, Workload: slow, Engine: engine})
			checkAccounting(t, res)
			t.Logf("%s; %s", res.Generator, res.Accounting)
			if g := res.Generator; g.LagP50Us < 15_000 {
				t.Fatalf("lag %+v, want a p50 of tens of ms", g)
			}
			if res.Accounting.Unsent == 0 {
				t.Fatalf("%s: a generator this slow cannot send all of its schedule", res.Accounting)
			}
		})
	}
}
