package loadgen

import (
	"errors"
	"time"
)

// Both engines walk their schedule through take, abandon and dropQueued,
// so the measured window's due requests are counted by one rule whatever
// the engine: a hit is due when its scheduled time falls in [meas, end),
// or [meas, stop) once the run is interrupted. Every due hit then ends in
// the recorder (completed, error, timeout) or in tally.unsent, which is
// what makes Accounting balance.

// errStopped fails a request cut by the run's interruption.
var errStopped = errors.New("run interrupted")

// retryPause keeps a connection whose connect failed from spinning on a
// dead port while it is behind schedule. The connection counts as busy
// during the pause, so the pause is not generator lag.
const retryPause = time.Millisecond

// windowTally is one connection's share of Accounting.Due and .Unsent,
// written only by the goroutine or loop that owns the connection.
type windowTally struct{ due, unsent int64 }

// hit is a request a connection has taken off its schedule and will send.
type hit struct {
	at       int64 // intended send, ns after start: the scheduled time plus any script delay
	measured bool  // scheduled in the measured window (else warm-up)
	raw      []byte
	label    string
}

// hitAt is the scheduled time of cumulative hit h in ns after start; ok is
// false once h falls at or past the end of the measured window.
func (r *run) hitAt(h float64) (int64, bool) {
	off, ok := r.sched.TimeOf(h)
	if !ok || int64(off) >= r.endNs {
		return 0, false
	}
	return int64(off), true
}

// windowEnd is where the measured window closes, in ns after start: the
// schedule's end, or the moment of the interruption if that came first.
func (r *run) windowEnd() int64 {
	if r.stop.Load() {
		return min(r.endNs, int64(r.stopAt.Sub(r.start)))
	}
	return r.endNs
}

// take decides the fate of hit h for a connection that became free at
// c.freeAt. A connection still busy when the window closed sends nothing
// more: h and the rest of its window are unsent. Otherwise h is sent, even
// if the generator only gets to it after the end: that lateness is lag,
// not the server's backlog.
func (c *conn) take(h float64) (hit, bool) {
	r := c.r
	due, ok := r.hitAt(h)
	if !ok {
		return hit{}, false
	}
	if c.halted() || c.freeAt >= r.windowEnd() {
		c.abandon(h)
		return hit{}, false
	}
	raw, label, err := c.src.next(c.reqRng)
	if err != nil {
		c.t.stopped.Store(true)
		c.abandon(h)
		return hit{}, false
	}
	measured := due >= r.measNs
	if measured {
		c.tally.due++
	}
	if c.t.script != nil && c.t.script.hasDelay {
		due += int64(c.t.script.delay())
	}
	return hit{at: due, measured: measured, raw: raw, label: label}, true
}

// abandon counts h and every later hit of the window as due and unsent.
// It steps the arrivals RNG exactly as sending would, which keeps Due a
// function of the schedule and the seed alone.
func (c *conn) abandon(h float64) {
	r := c.r
	end := r.windowEnd()
	for {
		due, ok := r.hitAt(h)
		if !ok || due >= end {
			return
		}
		if due >= r.measNs {
			c.tally.due++
			c.tally.unsent++
		}
		h = c.nextHit(h, false)
	}
}

// dropQueued settles hit h, taken but not sent when the connection
// stopped, and the rest of its window.
func (c *conn) dropQueued(h float64) {
	c.settleQueued(h)
	c.abandon(c.nextHit(h, false))
}

// settleQueued settles hit h alone, taken but not sent when the connection
// stopped. A hit scheduled after the interruption was never due: it is
// taken back out of Due.
func (c *conn) settleQueued(h float64) {
	r := c.r
	if due, ok := r.hitAt(h); ok && due >= r.measNs {
		if due < r.windowEnd() {
			c.tally.unsent++
		} else {
			c.tally.due--
		}
	}
}

// interrupt is the run's reaction to cancellation: the window closes now,
// and the goroutine engine's blocked reads, writes and dials are woken so
// in-flight requests are cut at once rather than at their timeout.
func (r *run) interrupt(conns []*conn) {
	r.stopAt = time.Now()
	r.stop.Store(true)
	for _, c := range conns {
		c.wake()
	}
}

// stopped is r.stop, or the context's cancellation the instant before
// interrupt has run: a failure then is the cut, not the server's doing.
func (r *run) stopped() bool { return r.stop.Load() || (r.ctx != nil && r.ctx.Err() != nil) }

// wake makes a blocked read or write of the goroutine engine return at
// once. setDeadline checks the stop under the same lock, so a deadline
// refreshed concurrently cannot undo the wake-up.
func (c *conn) wake() {
	c.mu.Lock()
	if c.nc != nil {
		c.nc.SetDeadline(time.Unix(1, 0))
	}
	c.mu.Unlock()
}

// setDeadline moves the socket deadline; false means the run was stopped
// and nothing more may be sent.
func (c *conn) setDeadline(dl time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.r.stop.Load() {
		return false
	}
	c.deadline = dl
	c.nc.SetDeadline(dl)
	return true
}
