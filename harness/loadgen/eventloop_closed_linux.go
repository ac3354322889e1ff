package loadgen

// The closed loop on the event loop: each connection is a user that sends
// its next request when its answer arrived and its think time passed, as
// runClosed does with a goroutine per user. On a goroutine each request
// paid a read that found nothing (EAGAIN), a park in the netpoller and a
// wake-up; here answers that arrive together are handled in one epoll wake
// and the next requests go out in the same pass, as wrk's loop does. The
// rules are runClosed's: the user's next send is queued for when it means
// to send (the origin of its lag), and what it sends, whether it counts as
// warm-up and whether the run's counts let it send at all is decided when
// it does, from the clock of that wake-up, which is then the request's
// start: a user waits for its reply, so its latency runs from the actual
// send.

// queueUser queues c's next send for ready (ns since start). A user that
// would only be ready at or after the end has finished.
func (l *loop) queueUser(c *loopConn, ready int64) {
	c.nextDue = noNextDue // the user sends again once answered: read at once
	if ready >= l.r.endNs {
		c.st = lcDone
		return
	}
	c.st, c.key = lcIdle, ready
	l.push(c)
}

// startUser queues a user's first send: at once, or at its turn when
// users are started at a given rate.
func (l *loop) startUser(c *loopConn) {
	var ready int64
	if rate := l.r.cfg.Closed.SpawnRate; rate > 0 {
		ready = int64(secondsToDur(float64(c.idx) / rate))
	}
	l.queueUser(c, ready)
}

// thinkThenQueue queues the user's next send after its answer or failure:
// when the connection became free plus the think time and any script
// delay or the user's own pause.
func (l *loop) thinkThenQueue(c *loopConn) {
	l.queueUser(c, c.freeAt+int64(c.think()))
}

// takeUserTurn decides, at now, whether user c sends now and what; false
// retires the user (the run ended, its counts are spent, or its script
// stopped).
func (l *loop) takeUserTurn(c *loopConn, now int64) bool {
	r := l.r
	cl := r.cfg.Closed
	c.st = lcDone
	if c.halted() || now >= r.endNs {
		return false
	}
	warm := now < r.measNs
	if !warm {
		if cl.Iterations > 0 && c.iterations >= cl.Iterations {
			return false
		}
		if cl.MaxRequests > 0 && r.budget.Add(-1) < 0 {
			return false
		}
		c.iterations++
	}
	raw, label, err := c.src.next(c.reqRng)
	if err != nil {
		c.t.stopped.Store(true)
		return false
	}
	if !warm {
		c.tally.due++ // started in the window; nothing is ever unsent
	}
	c.raw, c.label, c.warm, c.st = raw, label, warm, lcIdle
	c.head = len(raw) > 5 && string(raw[:5]) == "HEAD "
	c.due = now
	return true
}
