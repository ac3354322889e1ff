package loadgen

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testutil"
)

// Every scenario runs on both open-loop engines against a real loopback
// server and must balance: Due = Completed + Errors + Timeouts + Unsent.
// Where the schedule alone decides a bucket (fixed arrivals, a server that
// is fast, refuses or fails every request), the count is asserted exactly;
// where the machine's timing decides it (capacity, timeouts), a range is.

var engines = []string{EngineLoop, EngineGoroutine}

// checkAccounting asserts what must hold for every result: the invariant,
// and the wrk-style counters agreeing with the buckets.
func checkAccounting(t *testing.T, res *Result) {
	t.Helper()
	a, e := res.Accounting, res.Errors
	if !a.Balanced() {
		t.Fatalf("unbalanced: %s", a)
	}
	if a.Completed+a.HTTPErrors != res.Requests || a.HTTPErrors != e.Status {
		t.Fatalf("%s disagrees with %d responses, %d 4xx/5xx", a, res.Requests, e.Status)
	}
	connectTimeouts := e.Classes["connect_timeout"]
	if a.Timeouts != e.Timeout+connectTimeouts || a.SocketErrors != e.Connect+e.Read+e.Write-connectTimeouts {
		t.Fatalf("%s disagrees with errors %+v", a, e)
	}
	// Every request sent in the window had its lag measured, once.
	if res.Generator.LagSamples != a.Due-a.Unsent {
		t.Fatalf("%d lag samples for %d sends", res.Generator.LagSamples, a.Due-a.Unsent)
	}
	var completed int64
	for _, ep := range res.Endpoints {
		completed += ep.Completed
	}
	if completed != a.Completed {
		t.Fatalf("endpoints complete %d, accounting %d", completed, a.Completed)
	}
	if res.Config.Mode == "open" && res.DurationSeconds > 0 {
		if due := res.DueRate * res.DurationSeconds; due < float64(a.Due)-0.01 || due > float64(a.Due)+0.01 {
			t.Fatalf("due rate %.3f/s over %.3fs is %.2f requests, accounting says %d", res.DueRate, res.DurationSeconds, due, a.Due)
		}
	}
	if res.WallSeconds < res.DurationSeconds-0.01 {
		t.Fatalf("wall %.3fs shorter than the measured period %.3fs", res.WallSeconds, res.DurationSeconds)
	}
}

func want(t *testing.T, what string, got, exp int64) {
	t.Helper()
	if got != exp {
		t.Fatalf("%s = %d, want %d", what, got, exp)
	}
}

func within(t *testing.T, what string, got, lo, hi int64) {
	t.Helper()
	if got < lo || got > hi {
		t.Fatalf("%s = %d, want %d..%d", what, got, lo, hi)
	}
}

func hostOf(url string) string { return strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/") }

// onlyPeer asserts the connections reached addr and nothing else.
func onlyPeer(t *testing.T, res *Result, addr string, conns int64) {
	t.Helper()
	if len(res.Peers) != 1 || res.Peers[0].Addr != addr || res.Peers[0].Connections != conns {
		t.Fatalf("peers %+v, want %d connections to %s", res.Peers, conns, addr)
	}
}

func TestAccounting(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, engine string)
	}{
		{"slow server", func(t *testing.T, engine string) {
			// 1.5 s per request at 10/s per connection: each connection
			// gets three requests out (at 0, 1.5 and 3.0 s); the last is
			// still in flight at the end and waited for. The other 29 of
			// its 32 due requests are unsent.
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(1500 * time.Millisecond)
				io.WriteString(w, "ok")
			})
			res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 2, Rate: 20, Duration: 3200 * time.Millisecond, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 64)
			want(t, "completed", a.Completed, 6)
			want(t, "unsent", a.Unsent, 58)
			if res.DueRate != 20 {
				t.Fatalf("due rate %v, want 20", res.DueRate)
			}
			if res.WallSeconds < 4.4 {
				t.Fatalf("wall %.2fs: the requests in flight at 3.2 s (answered at ~4.5 s) were not waited for", res.WallSeconds)
			}
			// The server's backlog is not the generator's lag.
			if res.Latency.Max < 1_000_000 || res.Generator.LagMaxUs > 50_000 {
				t.Fatalf("corrected max %dus, lag max %dus: want a long latency and a short lag", res.Latency.Max, res.Generator.LagMaxUs)
			}
			onlyPeer(t, res, hostOf(srv.URL), 2)
		}},
		{"overload 1.2x capacity", func(t *testing.T, engine string) {
			// Two workers of 10 ms: 200 req/s at most, offered 240.
			workers := make(chan struct{}, 2)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				workers <- struct{}{}
				time.Sleep(10 * time.Millisecond)
				<-workers
				io.WriteString(w, "ok")
			})
			res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 8, Rate: 240, Duration: time.Second, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 240)
			want(t, "errors+timeouts", a.Errors+a.Timeouts, 0)
			// About 200 served (sleep overshoot makes the capacity a little
			// less), the rest of the 240 left unsent.
			within(t, "completed", a.Completed, 150, 215)
			within(t, "unsent", a.Unsent, 25, 90)
			want(t, "server hits", srv.hits.Load(), a.Completed)
		}},
		{"5% of requests answered 503", func(t *testing.T, engine string) {
			var n, failed atomic.Int64
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1)%20 == 0 {
					failed.Add(1)
					w.WriteHeader(503)
					return
				}
				io.WriteString(w, "ok")
			})
			res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 4, Rate: 400, Duration: 500 * time.Millisecond, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 200)
			want(t, "completed+http errors", a.Completed+a.HTTPErrors, srv.hits.Load())
			want(t, "http errors", a.HTTPErrors, failed.Load())
			within(t, "http errors", a.HTTPErrors, 9, 10)
			want(t, "socket errors+timeouts", a.SocketErrors+a.Timeouts, 0)
			want(t, "errors", a.Errors, a.HTTPErrors)
		}},
		{"server never answers", func(t *testing.T, engine string) {
			addr := testutil.ListenAndHold(t, nil)
			timeout := 200 * time.Millisecond
			res := runLoad(t, Config{URL: "http://" + addr + "/", Threads: 1, Connections: 2, Rate: 20, Duration: time.Second,
				Timeout: timeout, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 20)
			want(t, "completed+errors", a.Completed+a.Errors, 0)
			// A request every ~timeout per connection: 5 each, the last
			// timing out after the end.
			within(t, "timeouts", a.Timeouts, 8, 12)
			want(t, "wrk timeouts", res.Errors.Timeout, a.Timeouts)
			if res.WallSeconds <= res.DurationSeconds || res.WallSeconds > res.DurationSeconds+1.1*timeout.Seconds()+0.3 {
				t.Fatalf("wall %.2fs: the last requests should be waited for up to the timeout past %.2fs", res.WallSeconds, res.DurationSeconds)
			}
		}},
		{"refused port", func(t *testing.T, engine string) {
			addr := testutil.FreeAddr(t)
			res := runLoad(t, Config{URL: "http://" + addr + "/", Threads: 1, Connections: 2, Rate: 50, Duration: 500 * time.Millisecond, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 25)
			want(t, "socket errors", a.SocketErrors, 25)
			want(t, "refused", res.Errors.Classes["connect_refused"], 25)
			if len(res.Peers) != 0 {
				t.Fatalf("peers %+v from refused connects", res.Peers)
			}
		}},
		{"server closes connections", func(t *testing.T, engine string) {
			addr := testutil.ListenAndHold(t, func(c net.Conn) {
				buf := make([]byte, 4096)
				c.Read(buf)
				c.Close()
			})
			res := runLoad(t, Config{URL: "http://" + addr + "/", Threads: 1, Connections: 2, Rate: 50, Duration: 500 * time.Millisecond, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 25)
			want(t, "socket errors", a.SocketErrors, 25)
			want(t, "read errors", res.Errors.Read, 25)
			want(t, "eof+reset", res.Errors.Classes["eof"]+res.Errors.Classes["reset"], 25)
			// One connection per request: each was closed under it.
			onlyPeer(t, res, addr, 25)
		}},
		{"warm-up", func(t *testing.T, engine string) {
			srv := newServer(t, nil)
			res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 100, Duration: 500 * time.Millisecond, Warmup: 250 * time.Millisecond, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 50)
			want(t, "completed", a.Completed, 50)
			want(t, "warm-up requests", res.Warmup.Requests, 25)
			want(t, "server hits", srv.hits.Load(), 75)
		}},
		{"connection close", func(t *testing.T, engine string) {
			srv := newServer(t, nil)
			res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 50, Duration: 500 * time.Millisecond, ConnectionClose: true, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 25)
			want(t, "completed", a.Completed, 25)
			onlyPeer(t, res, hostOf(srv.URL), srv.conns.Load())
			want(t, "connections", srv.conns.Load(), 25)
		}},
		{"lua script", func(t *testing.T, engine string) {
			srv := newServer(t, nil)
			script := `
local n = 0
request = function()
  n = n + 1
  if n % 2 == 0 then return wrk.format("GET", "/a") end
  return wrk.format("GET", "/b")
end
delay = function() return 2 end
`
			res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: 4, Rate: 100, Duration: 500 * time.Millisecond, ScriptSource: script, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 50)
			want(t, "completed", a.Completed, 50)
			if len(res.Endpoints) != 2 {
				t.Fatalf("endpoints %+v", res.Endpoints)
			}
		}},
	}
	for _, sc := range scenarios {
		for _, engine := range engines {
			t.Run(sc.name+"/"+engine, func(t *testing.T) {
				t.Parallel()
				sc.run(t, engine)
			})
		}
	}
}

// With exp arrivals Due is random, but a function of the seed alone: both
// engines must find the count a replay of the schedule finds, whatever the
// request RNG (here a Go workload) draws in between.
func TestExpArrivalsDueIsTheSeedsOnBothEngines(t *testing.T) {
	t.Parallel()
	const (
		conns = 4
		rate  = 200.0
		seed  = 7
	)
	dur := time.Second
	sched := ScheduleOf([]Phase{{Dur: dur, From: rate, To: rate}})
	var replay int64
	for i := range conns {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		for h := conns * rng.ExpFloat64(); ; h += conns * rng.ExpFloat64() {
			if at, ok := sched.TimeOf(h); !ok || at >= dur {
				break
			}
			replay++
		}
	}
	w := WorkloadFunc(func(rng *rand.Rand) Request { return Request{Path: []string{"/a", "/b", "/c"}[rng.IntN(3)]} })
	for _, engine := range engines {
		srv := newServer(t, nil)
		res := runLoad(t, Config{URL: srv.URL, Threads: 2, Connections: conns, Rate: rate, Duration: dur, Distribution: "exp", Seed: seed, Workload: w, Engine: engine})
		checkAccounting(t, res)
		want(t, engine+" due", res.Accounting.Due, replay)
		want(t, engine+" completed", res.Accounting.Completed, srv.hits.Load())
	}
	if replay < 150 || replay > 250 {
		t.Fatalf("replayed %d due, want ~200", replay)
	}
}

func TestClosedLoopAccounting(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, nil)
			res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 3, Closed: &Closed{Iterations: 5}, Engine: engine})
			checkAccounting(t, res)
			a := res.Accounting
			want(t, "due", a.Due, 15)
			want(t, "completed", a.Completed, 15)
			want(t, "unsent", a.Unsent, 0)

			// Timed, with a warm-up: the requests started in the window are due.
			srv2 := newServer(t, nil)
			res = runLoad(t, Config{URL: srv2.URL, Threads: 1, Connections: 2, Duration: 500 * time.Millisecond, Warmup: 200 * time.Millisecond,
				Closed: &Closed{ThinkMin: 10 * time.Millisecond}, Engine: engine})
			checkAccounting(t, res)
			want(t, "due", res.Accounting.Due, res.Requests)
			want(t, "server hits", srv2.hits.Load(), res.Requests+res.Warmup.Requests)
			if res.Requests < 20 {
				t.Fatalf("%d requests in 0.5 s at 10 ms think", res.Requests)
			}
		})
	}
}

// An interrupted run keeps its partial result: the window closes at the
// interruption, requests in flight are cut at once as timeouts of class
// "cancelled", and the overdue ones are unsent.
func TestInterruptedRunIsAccounted(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(time.Second):
				case <-r.Context().Done():
				}
				io.WriteString(w, "ok")
			})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(1225*time.Millisecond, cancel)
			begin := time.Now()
			res, err := Run(ctx, Config{URL: srv.URL, Threads: 2, Connections: 2, Rate: 20, Duration: 5 * time.Second, Engine: engine})
			if !errors.Is(err, context.Canceled) || res == nil {
				t.Fatalf("Run: %v, %v", res, err)
			}
			if took := time.Since(begin); took > 1700*time.Millisecond {
				t.Fatalf("stopping took until %s", took)
			}
			checkAccounting(t, res)
			if !res.Interrupted || res.DurationSeconds < 1.1 || res.DurationSeconds > 1.3 {
				t.Fatalf("interrupted %v after %.3fs", res.Interrupted, res.DurationSeconds)
			}
			// Hits every 50 ms; those scheduled before the interruption are due.
			dueBefore := int64(res.DurationSeconds/0.05) + 1
			a := res.Accounting
			want(t, "due", a.Due, dueBefore)
			// Sent at 0 and 1 s per connection; the second is cut.
			want(t, "completed", a.Completed, 2)
			want(t, "timeouts", a.Timeouts, 2)
			want(t, "cancelled", res.Errors.Classes["cancelled"], 2)
			want(t, "unsent", a.Unsent, dueBefore-4)
		})
	}
}

// An interrupted closed loop cuts its users' requests in flight at once,
// as cancelled timeouts; a user's request was due when it was sent, so
// nothing is unsent.
func TestInterruptedClosedLoopIsAccounted(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(time.Second):
				case <-r.Context().Done():
				}
				io.WriteString(w, "ok")
			})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			begin := time.Now()
			res, err := Run(ctx, Config{URL: srv.URL, Threads: 1, Connections: 2, Duration: 5 * time.Second,
				Closed: &Closed{}, Engine: engine})
			if !errors.Is(err, context.Canceled) || res == nil {
				t.Fatalf("Run: %v, %v", res, err)
			}
			if took := time.Since(begin); took > 800*time.Millisecond {
				t.Fatalf("stopping took until %s", took)
			}
			checkAccounting(t, res)
			if !res.Interrupted || res.Config.Engine != engine {
				t.Fatalf("interrupted %v, engine %q", res.Interrupted, res.Config.Engine)
			}
			a := res.Accounting
			want(t, "due", a.Due, 2)
			want(t, "completed", a.Completed, 0)
			want(t, "cancelled", res.Errors.Classes["cancelled"], 2)
			want(t, "unsent", a.Unsent, 0)
		})
	}
}
