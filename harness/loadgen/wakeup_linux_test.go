package loadgen

import (
	"testing"
	"time"
)

// The loop's wake-up plan: answers that may wait are collected when the
// next send is due, and anything that must be handled as it arrives makes
// the loop wait on events.
func TestPlanWake(t *testing.T) {
	const now, limit = 1_000, int64(time.Second)
	// awaiting is a request in flight whose connection's next hit is due
	// at next, on a connection whose last answer fitted the buffers.
	awaiting := func(next int64) *loopConn {
		return &loopConn{conn: &conn{}, st: lcReading, sent: 500, nextDue: next, lastFit: true}
	}
	const never = noNextDue
	cases := []struct {
		name     string
		conns    []*loopConn
		queued   bool
		nextSend int64
		want     wakePlan
	}{
		{"nothing to do waits for the limit", nil, false, 0,
			wakePlan{deadline: limit, oldestSent: never}},
		{"a queued send sets the deadline", []*loopConn{{st: lcIdle}}, true, 5_000,
			wakePlan{deadline: 5_000, oldestSent: never}},
		{"an answer that may wait until its connection's next send", []*loopConn{awaiting(3_000)}, true, 5_000,
			wakePlan{deadline: 3_000, inflight: 1, oldestSent: 500, deferred: 1}},
		{"the earliest of several deferred answers", []*loopConn{awaiting(9_000), awaiting(4_000), awaiting(7_000)}, false, 0,
			wakePlan{deadline: 4_000, inflight: 3, oldestSent: 500, deferred: 3}},
		{"a connection behind schedule is read as its answer arrives", []*loopConn{awaiting(now), awaiting(8_000)}, true, 5_000,
			wakePlan{deadline: 5_000, inflight: 2, oldestSent: 500, deferred: 1, needEvents: true}},
		{"a connection with no further hit is read as its answer arrives", []*loopConn{awaiting(never)}, false, 0,
			wakePlan{deadline: limit, inflight: 1, oldestSent: 500, needEvents: true}},
		{"a connect or a partial write needs its events", []*loopConn{{st: lcConnecting, sent: 700}, {st: lcWriting, sent: 600}}, false, 0,
			wakePlan{deadline: limit, inflight: 2, oldestSent: 600, needEvents: true}},
		{"the oldest send in flight is the first to time out", []*loopConn{awaiting(9_000), {st: lcReading, sent: 200, nextDue: 9_000, lastFit: true}}, false, 0,
			wakePlan{deadline: 9_000, inflight: 2, oldestSent: 200, deferred: 2}},
		{"no answer waits longer than the horizon", []*loopConn{awaiting(int64(time.Hour))}, false, 0,
			wakePlan{deadline: 500 + int64(deferHorizon), inflight: 1, oldestSent: 500, deferred: 1}},
		{"finished connections count for nothing", []*loopConn{{st: lcDone, sent: 100}, {st: lcIdle, sent: 100}}, false, 0,
			wakePlan{deadline: limit, oldestSent: never}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.conns {
				if c.conn == nil {
					c.conn = &conn{}
				}
			}
			if got := planWake(tc.conns, now, tc.nextSend, tc.queued, limit); got != tc.want {
				t.Fatalf("planWake = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// An answer is left unread only while that costs nothing: the connection's
// last answer fitted the socket buffers, nothing of this one was read yet,
// and its next request is not due.
func TestCanDefer(t *testing.T) {
	const now = 1_000
	base := func() *loopConn {
		return &loopConn{conn: &conn{}, st: lcReading, nextDue: 2_000, lastFit: true}
	}
	if !base().canDefer(now) {
		t.Fatal("a small answer whose next send is ahead was not deferred")
	}
	for name, spoil := range map[string]func(c *loopConn){
		"first answer on the connection, or a large last one": func(c *loopConn) { c.lastFit = false },
		"next request already due":                            func(c *loopConn) { c.nextDue = now },
		"no further hit":                                      func(c *loopConn) { c.nextDue = noNextDue },
		"part of the answer already parsed":                   func(c *loopConn) { c.resp.bytes = 17 },
		"unparsed bytes in the buffer":                        func(c *loopConn) { c.wr = 5 },
	} {
		c := base()
		spoil(c)
		if c.canDefer(now) {
			t.Errorf("%s: deferred", name)
		}
	}
}

// At a low rate every answer but a connection's first waits in its socket
// until the deferral horizon ends (its connection's next send is 50 ms
// later); its latency must still end at its arrival, not at the late read.
func TestDeferredAnswersEndAtTheirArrival(t *testing.T) {
	srv := newServer(t, nil)
	res := runLoad(t, Config{URL: srv.URL, Threads: 1, Connections: 1, Rate: 20, Duration: time.Second, Engine: EngineLoop})
	checkAccounting(t, res)
	// a stalled machine may leave one or two unsent at the end
	within(t, "completed", res.Accounting.Completed, 15, 20)
	p50 := res.UncorrectedLatency.Percentiles[0]
	if p50.Percentile != 50 || p50.Value >= deferHorizon.Microseconds()/2 {
		t.Fatalf("uncorrected %v: the answers were dated by the late read, %s after the send, not by their arrival", p50, deferHorizon)
	}
}
