package loadgen

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// pairs is a UserWorkload: each user sends /a then /b, then pauses.
type pairs struct {
	pause time.Duration
	users atomic.Int64
}

func (p *pairs) Next(*rand.Rand) Request { return Request{Path: "/a"} }
func (p *pairs) NewUser(int) User {
	p.users.Add(1)
	return &pairUser{pause: p.pause}
}

type pairUser struct {
	pause time.Duration
	n     int
}

func (u *pairUser) Next(*rand.Rand) Request {
	u.n++
	if u.n%2 == 1 {
		return Request{Path: "/a", Label: "a"}
	}
	return Request{Path: "/b", Label: "b"}
}

func (u *pairUser) Pause(*rand.Rand) time.Duration {
	if u.n%2 == 0 {
		return u.pause
	}
	return 0
}

// A user workload keeps each connection's place in its sequence, and the
// closed loop waits the user's pause after the sequence's last answer
// only: two users pausing 400 ms after every pair send 3 pairs each in a
// second (at 0, 0.4 and 0.8 s), each user a, b, a, b in order. The window
// is the whole second, though every user's last answer came at 0.8 s: a
// user thinking is part of the run.
func TestUserWorkloadKeepsItsSequenceAndPause(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, nil)
			w := &pairs{pause: 400 * time.Millisecond}
			res := runLoad(t, Config{URL: srv.URL, Connections: 2, Threads: 1, Duration: time.Second, Workload: w,
				Closed: &Closed{}, Engine: engine})
			if w.users.Load() != 2 {
				t.Fatalf("%d users made for 2 connections", w.users.Load())
			}
			// never the hundreds of no pause
			if res.Requests < 2*2*2 || res.Requests > 2*2*4 {
				t.Fatalf("requests = %d, want about 12 (3 pairs for each of 2 users)", res.Requests)
			}
			if res.DurationSeconds < 0.999 || res.WallSeconds+0.001 < res.DurationSeconds {
				t.Fatalf("window %.3f s, wall %.3f s: want the whole second, the users' last pause included", res.DurationSeconds, res.WallSeconds)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			var a, b int
			for _, s := range srv.seen {
				switch s.uri {
				case "/a":
					a++
				case "/b":
					b++
				}
			}
			// the run may end between a user's a and its b
			if a < b || a-b > 2 {
				t.Fatalf("server saw %d of /a and %d of /b, want pairs", a, b)
			}
			labels := map[string]int64{}
			for _, e := range res.Endpoints {
				labels[e.Label] = e.Count
			}
			if labels["a"] == 0 || labels["b"] == 0 || len(labels) != 2 {
				t.Fatalf("endpoints %v, want the user's labels a and b", labels)
			}
		})
	}
}
