package loadgen

import (
	"bufio"
	"io"
	"net"
	"sync"
	"time"
)

// A goroutine per connection, each running its own slice of the schedule,
// with a hand-rolled HTTP/1.1 wire: the Go runtime's netpoller already is an
// epoll loop, and this shape keeps the hot path free of allocations and of
// any hand-off between goroutines. Both loops run here when the event loop
// is not picked (see pickEngine).

func (r *run) runGoroutines(conns []*conn, started func()) {
	cfg := r.cfg
	// Connect before the clock starts so the first scheduled requests do
	// not pay for the handshake; failures are retried (and counted) later.
	if !cfg.ConnectionClose {
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() { defer wg.Done(); _ = c.dial() }()
		}
		wg.Wait()
	}
	r.startClock()
	started()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.Closed != nil {
				c.runClosed()
			} else {
				c.runOpen()
			}
			c.close()
			if c.timer != nil {
				c.timer.close()
			}
		}()
	}
	wg.Wait()
}

func (c *conn) dial() error {
	d := net.Dialer{Timeout: c.r.cfg.Timeout}
	nc, err := d.DialContext(c.r.ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.r.stop.Load() {
		c.mu.Unlock()
		nc.Close()
		return errStopped
	}
	c.nc = nc
	c.deadline = time.Time{}
	c.mu.Unlock()
	if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		c.peers.add(ta.AddrPort())
	}
	var src io.Reader = nc
	c.stamp = nil
	if sc, ok := newStampedConn(nc); ok {
		c.stamp, src = sc, sc
	}
	if c.br == nil {
		c.br = bufio.NewReaderSize(src, readBufferSize)
	} else {
		c.br.Reset(src)
	}
	return nil
}

// abort closes with a reset, leaving no TIME_WAIT (the loop's abortFd says why).
func (c *conn) abort() {
	c.mu.Lock()
	if tc, ok := c.nc.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.mu.Unlock()
	c.close()
}

func (c *conn) close() {
	if c.nc != nil {
		c.mu.Lock()
		c.nc.Close()
		c.nc = nil
		c.mu.Unlock()
	}
}

// precise reports whether a wait ending at `at` needs the timerfd. Only at
// low rates: when requests are frequent the netpoller wakes often enough
// that runtime timers are on time, and the timerfd's three syscalls per wait
// would cost more than they fix (measured: ~175µs lateness and 25 % less CPU
// at 20k req/s with runtime timers; ~520µs vs ~60µs lateness at 2k req/s).
func (r *run) precise(at time.Time) bool {
	return r.sched != nil && r.sched.RateAt(at.Sub(r.start)) < r.cfg.PreciseTimerMaxRate
}

// sleepUntil waits for the wall-clock moment at, in slices so cancellation
// is noticed; it reports false when the run was stopped meanwhile.
func (c *conn) sleepUntil(at time.Time) bool {
	for {
		if c.halted() {
			return false
		}
		d := time.Until(at)
		if d <= 0 {
			return true
		}
		if d > sleepSlice {
			d = sleepSlice
		}
		if c.timer == nil || !c.r.precise(at) || !c.timer.sleep(at, d) {
			time.Sleep(d)
		}
	}
}

func (c *conn) runOpen() {
	r := c.r
	for h := c.nextHit(0, true); ; h = c.nextHit(h, false) {
		next, ok := c.take(h)
		if !ok {
			return
		}
		ready := r.start.Add(time.Duration(max(next.at, c.freeAt)))
		if !c.sleepUntil(ready) {
			c.dropQueued(h)
			return
		}
		c.exchange(r.start.Add(time.Duration(next.at)), ready, next.raw, next.label, !next.measured)
	}
}

func (c *conn) runClosed() {
	r := c.r
	cl := r.cfg.Closed
	ready := r.start // when the user means to send next: the origin of lag
	if cl.SpawnRate > 0 {
		ready = r.start.Add(secondsToDur(float64(c.idx) / cl.SpawnRate))
		if !c.sleepUntil(ready) {
			return
		}
	}
	var iterations int64
	for !c.halted() {
		now := time.Now()
		if !now.Before(r.end) {
			return
		}
		warm := now.Before(r.meas)
		if !warm {
			if cl.Iterations > 0 && iterations >= cl.Iterations {
				return
			}
			if cl.MaxRequests > 0 && r.budget.Add(-1) < 0 {
				return
			}
			iterations++
		}
		raw, label, err := c.src.next(c.reqRng)
		if err != nil {
			c.t.stopped.Store(true)
			return
		}
		if !warm {
			c.tally.due++ // started in the window; nothing is ever unsent
		}
		// A user waits for its reply, so latency runs from the actual send.
		c.exchange(time.Now(), ready, raw, label, warm)
		think := c.think()
		ready = r.start.Add(time.Duration(c.freeAt) + think)
		// A failure may have set a retry pause (in freeAt) even without
		// think time; without a think or a pause there is nothing to wait.
		// a user thinking past the end has nothing left to send
		wake := ready
		if r.end.Before(wake) {
			wake = r.end
		}
		if (think > 0 || c.s.failed) && !c.sleepUntil(wake) {
			return
		}
	}
}

// exchange sends one request and reads its response. due is the intended
// send time, from which the corrected latency is measured, and ready the
// moment the request could have gone out (due, or later if the connection
// was busy), from which the generator's lag is.
func (c *conn) exchange(due, ready time.Time, raw []byte, label string, warm bool) {
	r := c.r
	s := &c.s
	*s = sample{label: label}
	sent := time.Now()
	s.lag = max(sent.Sub(ready), 0)
	if c.nc == nil {
		if err := c.dial(); err != nil {
			c.fail("connect", err, warm)
			return
		}
	}
	// Deadlines are refreshed only when they would cut this request short;
	// the 10 % slack makes that rare without letting a request wait much
	// longer than the timeout. Past the end the slack is dropped, so the
	// drain waits for in-flight requests no longer than the timeout.
	if limit := sent.Add(r.cfg.Timeout); c.deadline.Before(limit) {
		dl := limit.Add(r.cfg.Timeout / 10)
		if dl.After(r.hardEnd) {
			dl = r.hardEnd
			if limit.After(dl) {
				dl = limit
			}
		}
		if !dl.Equal(c.deadline) && !c.setDeadline(dl) {
			c.fail("write", errStopped, warm)
			return
		}
	}
	if c.stamp != nil {
		c.stamp.last = 0
	}
	if _, err := c.nc.Write(raw); err != nil {
		c.fail("write", err, warm)
		return
	}
	head := len(raw) > 5 && string(raw[:5]) == "HEAD "
	err := readResponse(c.br, head, c.capture, &c.resp)
	done := time.Now()
	if err != nil {
		c.fail("read", err, warm)
		return
	}
	// the response ended, and the connection was free, when the answer
	// arrived, not when this goroutine got to it
	var stamp int64
	if c.stamp != nil {
		stamp = c.stamp.last
	}
	c.freeAt = arrivalOn(stamp, done, r.start, int64(sent.Sub(r.start)))
	s.corrected = time.Duration(c.freeAt - int64(due.Sub(r.start)))
	s.uncorrected = time.Duration(c.freeAt - int64(sent.Sub(r.start)))
	s.status, s.bytes, s.bodyBytes = c.resp.status, c.resp.bytes, c.resp.bodyBytes
	c.record(warm)
	if c.capture {
		c.t.script.response(c.resp.status, c.resp.headers, c.resp.body)
	}
	switch {
	case r.cfg.ConnectionClose:
		c.abort()
	case c.resp.mustClose:
		c.close()
	}
}
