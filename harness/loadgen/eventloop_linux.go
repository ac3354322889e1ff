package loadgen

import (
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
)

// The event engine: one epoll loop per thread, as wrk's, instead
// of a goroutine per connection. Profiles of the goroutine engine at partial
// load showed most CPU in waking: every request paid a runtime timer, a
// goroutine switch, a read that found nothing (EAGAIN) and a netpoller
// round trip before the real read. Here a request costs a write and a read
// plus a share of one epoll_pwait2, whose nanosecond timeout doubles as the
// schedule timer (no timerfd), and every send and reply that are due when
// the loop wakes are handled in that one wake-up. Replies that can wait do
// not wake it at all (wakeup_linux.go); the closed loop runs here too
// (eventloop_closed_linux.go).

const (
	loopEvents = 256
	// maxLineBuffer bounds how far the read buffer grows for a status,
	// header or chunk-size line that does not fit; beyond it the response
	// is malformed.
	maxLineBuffer  = 1 << 20
	sysEpollPwait2 = 441
	// batchSlack lets a wait for the next send end this much later above
	// PreciseTimerMaxRate, so one wake-up sends several requests: at
	// 12k req/s it cut wake-ups per request from 0.8 to 0.35 and CPU by a
	// fifth. The lateness shows in the corrected latency, as it should;
	// the goroutine engine's runtime timers were up to 1ms late there.
	batchSlack = 250 * time.Microsecond
)

type lcState uint8

const (
	lcIdle       lcState = iota // waiting for its due time (in the heap)
	lcConnecting                // non-blocking connect under way
	lcWriting                   // request partly written
	lcReading                   // request sent, reading the response
	lcDone                      // schedule finished
)

type loopConn struct {
	*conn
	fd     int
	li     int32 // index in the loop, carried by its epoll events
	gen    int32 // tells a stale event for a closed fd from the new one
	st     lcState
	h      float64
	due    int64 // scheduled send, ns since run start (latency origin)
	key    int64 // heap order and lag origin: max(due, freeAt)
	sent   int64
	lag    int64 // sent - key
	warm   bool
	head   bool
	raw    []byte
	label  string
	out    []byte
	buf    []byte
	rd, wr int
	p      bufParser
	sa     syscall.Sockaddr
	family int
	rx     rxStamper
	// hNext is the hit after the one taken, drawn when that one was
	// queued, and nextDue its scheduled time (noNextDue when none), by
	// which the answer in flight must be read; lastFit tells whether the
	// connection's last answer was small enough to leave unread that long.
	hNext   float64
	nextDue int64
	lastFit bool
	// iterations counts a closed-loop user's measured requests.
	iterations int64
	// arrived is the kernel's stamp (Unix ns) of the last bytes read for
	// the request in flight; 0 when unknown.
	arrived int64
}

type loop struct {
	r      *run
	closed bool
	epfd   int
	conns  []*loopConn
	heap   []*loopConn
	events [loopEvents]syscall.EpollEvent
	live   int // connections whose schedule has not finished
	ts     syscall.Timespec
	noPw2  bool
	// yielded is when the loop last yielded (see yieldEvery).
	yielded int64
}

func eventLoopAvailable() bool { return true }

// runLoops drives the open loop on min(Threads, GOMAXPROCS-1) loops, at
// least one. A loop blocked in epoll leaves its P in a syscall; while
// another P is idle, sysmon leaves it there, but with none idle it takes
// the P at every wait and then polls every 20µs (at GOMAXPROCS=1 a tenth of
// the CPU profile was its nanosleeps and the P hand-backs). A spare P also
// keeps the rest of the process (series, an in-process server) responsive.
func (r *run) runLoops(conns []*conn, started func()) error {
	n := max(1, min(r.cfg.Threads, runtime.GOMAXPROCS(0)-1))
	addrs := map[string]syscall.Sockaddr{}
	loops := make([]*loop, n)
	for i := range loops {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			for _, l := range loops[:i] {
				syscall.Close(l.epfd)
			}
			return os.NewSyscallError("epoll_create1", err)
		}
		loops[i] = &loop{r: r, epfd: fd, closed: r.cfg.Closed != nil}
	}
	defer func() {
		for _, l := range loops {
			for _, c := range l.conns {
				l.closeFd(c)
			}
			syscall.Close(l.epfd)
		}
	}()
	for _, c := range conns {
		sa, ok := addrs[c.addr]
		if !ok {
			ta, err := net.ResolveTCPAddr("tcp", c.addr)
			if err != nil {
				return err
			}
			if ip4 := ta.IP.To4(); ip4 != nil {
				sa = &syscall.SockaddrInet4{Port: ta.Port, Addr: [4]byte(ip4)}
			} else {
				sa = &syscall.SockaddrInet6{Port: ta.Port, Addr: [16]byte(ta.IP.To16())}
			}
			addrs[c.addr] = sa
		}
		l := loops[c.t.id%n]
		lc := &loopConn{conn: c, fd: -1, sa: sa, family: syscall.AF_INET, buf: make([]byte, readBufferSize)}
		if _, v6 := sa.(*syscall.SockaddrInet6); v6 {
			lc.family = syscall.AF_INET6
		}
		lc.li = int32(len(l.conns))
		l.conns = append(l.conns, lc)
	}

	// Connect before the clock starts, as the goroutine engine does.
	for _, l := range loops {
		l.connectAll()
	}
	r.startClock()
	started()
	done := make(chan struct{}, n)
	for _, l := range loops {
		go func() { l.run(); done <- struct{}{} }()
	}
	for range loops {
		<-done
	}
	return nil
}

func (l *loop) now() int64 { return int64(time.Since(l.r.start)) }

func (l *loop) connectAll() {
	limit := time.Now().Add(l.r.cfg.Timeout)
	pending := 0
	for _, c := range l.conns {
		if l.connect(c) == nil && c.st == lcConnecting {
			pending++
		}
	}
	for pending > 0 {
		wait := time.Until(limit)
		if wait <= 0 {
			break
		}
		n := l.wait(int64(wait))
		for i := 0; i < n; i++ {
			c, ok := l.conn(&l.events[i])
			if !ok || c.st != lcConnecting {
				continue
			}
			pending--
			if l.connected(c) != nil {
				l.closeFd(c)
			}
			c.st = lcIdle
		}
	}
	for _, c := range l.conns {
		if c.st == lcConnecting {
			l.closeFd(c) // retried, and counted, when first due
			c.st = lcIdle
		}
	}
}

// run is one loop's whole measured period, and the drain after it: a
// request in flight at the end is waited for until answered or timed out.
func (l *loop) run() {
	r := l.r
	for _, c := range l.conns {
		if l.closed {
			l.startUser(c)
			continue
		}
		c.h = c.nextHit(0, true)
		l.plan(c)
	}
	// nextExpiry is when the oldest request in flight at the last plan
	// times out: no request can time out before it, since later sends
	// expire later.
	nextExpiry := noNextDue
	preciseTimers()
	for {
		if r.stop.Load() {
			l.cut()
			return
		}
		now := l.now()
		for len(l.heap) > 0 && l.heap[0].key <= now {
			c := l.pop()
			if l.closed && !l.takeUserTurn(c, now) {
				continue
			}
			l.send(c, now)
		}
		if now >= nextExpiry {
			l.expire(now)
		}
		l.yieldNow(now)
		queued := len(l.heap) > 0
		var nextSend int64
		if queued {
			nextSend = l.heap[0].key
		}
		w := planWake(l.conns, now, nextSend, queued, now+int64(sleepSlice))
		if !queued && w.inflight == 0 {
			return
		}
		if w.deadline < now+int64(sleepSlice) && !r.precise(r.start.Add(time.Duration(w.deadline))) {
			w.deadline += int64(batchSlack)
		}
		nextExpiry = noNextDue
		if w.inflight > 0 {
			nextExpiry = w.oldestSent + int64(r.cfg.Timeout)
			w.deadline = min(w.deadline, nextExpiry)
		}
		n := l.waitFor(w, now)
		for i := 0; i < n; i++ {
			ev := &l.events[i]
			if c, ok := l.conn(ev); ok {
				l.event(c, ev.Events)
			}
		}
	}
}

// cut ends the loop on interruption: requests in flight are cut (timeouts
// of class "cancelled"), those queued are unsent.
func (l *loop) cut() {
	for _, c := range l.conns {
		switch c.st {
		case lcIdle:
			if !l.closed {
				c.settleQueued(c.h)
				c.abandon(c.hNext)
			}
		case lcConnecting, lcWriting, lcReading:
			l.fail(c, "read", errStopped)
			if !l.closed {
				c.abandon(c.hNext)
			}
		}
		c.st = lcDone
	}
	l.heap = l.heap[:0]
}

// plan takes the connection's next hit, as runOpen's loop does, and
// queues it; a finished schedule retires the connection.
func (l *loop) plan(c *loopConn) {
	c.st = lcDone
	next, ok := c.take(c.h)
	if !ok {
		return
	}
	c.raw, c.label, c.due, c.warm, c.st = next.raw, next.label, next.at, !next.measured, lcIdle
	c.head = len(next.raw) > 5 && string(next.raw[:5]) == "HEAD "
	c.key = max(next.at, c.freeAt)
	c.hNext = c.nextHit(c.h, false)
	c.nextDue = noNextDue
	if at, ok := l.r.hitAt(c.hNext); ok {
		c.nextDue = at
	}
	l.push(c)
}

func (l *loop) next(c *loopConn) {
	if l.closed {
		l.thinkThenQueue(c)
		return
	}
	c.h = c.hNext
	l.plan(c)
}

func (l *loop) send(c *loopConn, now int64) {
	// The wake-up's clock reading serves every send of its batch, which
	// saves a clock read per request: a send late in a large batch shows
	// the few microseconds the batch took before it neither as lag nor as
	// latency.
	c.sent, c.lag = now, now-c.key
	c.arrived = 0
	c.p.reset(&c.resp, c.head, c.capture)
	c.out = c.raw
	if c.fd < 0 {
		if err := l.connect(c); err != nil {
			l.failNext(c, "connect", err)
			return
		}
		if c.st == lcConnecting {
			return // the request goes out once connected
		}
	}
	l.write(c)
}

func (l *loop) write(c *loopConn) {
	for len(c.out) > 0 {
		n, err := rawWrite(c.fd, c.out)
		if err == syscall.EAGAIN {
			c.st = lcWriting
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP, Fd: c.li, Pad: c.gen}
			syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev)
			return
		}
		if err != nil {
			l.failNext(c, "write", os.NewSyscallError("write", err))
			return
		}
		c.out = c.out[n:]
	}
	if c.st == lcWriting {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: c.li, Pad: c.gen}
		syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev)
	}
	c.st = lcReading
}

func (l *loop) event(c *loopConn, ev uint32) {
	switch c.st {
	case lcConnecting:
		if err := l.connected(c); err != nil {
			l.failNext(c, "connect", err)
			return
		}
		c.st = lcWriting
		l.write(c)
	case lcWriting:
		if ev&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
			l.write(c)
		}
		if c.st == lcReading && ev&syscall.EPOLLIN != 0 {
			l.read(c)
		}
	case lcReading:
		l.read(c)
	default:
		// An idle keep-alive connection the server closed (or sent junk
		// on): drop it quietly and connect again when next due, which is
		// what a real client does with a stale pooled connection.
		l.closeFd(c)
	}
}

func (l *loop) read(c *loopConn) {
	if c.rd == c.wr {
		c.rd, c.wr = 0, 0
	} else if c.wr == len(c.buf) {
		if c.rd > 0 {
			c.wr = copy(c.buf, c.buf[c.rd:c.wr])
			c.rd = 0
		} else if len(c.buf) < maxLineBuffer {
			c.buf = append(c.buf, make([]byte, len(c.buf))...)
		} else {
			l.failNext(c, "read", errMalformed)
			return
		}
	}
	n, arrived, err := c.rx.recv(c.fd, c.buf[c.wr:])
	if err == syscall.EAGAIN || err == syscall.EINTR {
		return
	}
	if n > 0 {
		c.arrived = arrived // the read that completes a response dates it
	}
	if err != nil {
		l.failNext(c, "read", os.NewSyscallError("read", err))
		return
	}
	if n == 0 {
		if c.p.st == psUntilEOF {
			l.complete(c)
			return
		}
		eof := io.EOF
		if c.resp.bytes > 0 || c.rd < c.wr {
			eof = io.ErrUnexpectedEOF
		}
		l.failNext(c, "read", eof)
		return
	}
	c.wr += n
	used, perr := c.p.feed(c.buf[c.rd:c.wr], &c.resp)
	c.rd += used
	if perr != nil {
		l.failNext(c, "read", perr)
		return
	}
	if c.p.st == psDone {
		l.complete(c)
	}
}

func (l *loop) complete(c *loopConn) {
	// the response ended, and the connection was free, when the answer
	// arrived, not when this loop got to it
	end := arrivalOn(c.arrived, time.Now(), l.r.start, c.sent)
	c.freeAt = end
	s := &c.s
	*s = sample{label: c.label, corrected: time.Duration(end - c.due), uncorrected: time.Duration(end - c.sent),
		status: c.resp.status, bytes: c.resp.bytes, bodyBytes: c.resp.bodyBytes, lag: time.Duration(c.lag)}
	c.record(c.warm)
	c.lastFit = c.resp.bytes <= lazyMaxResponse
	if c.capture {
		c.t.script.response(c.resp.status, c.resp.headers, c.resp.body)
	}
	switch {
	case l.r.cfg.ConnectionClose:
		l.abortFd(c)
	case c.resp.mustClose || c.p.st == psUntilEOF:
		l.closeFd(c)
	}
	l.next(c)
}

func (l *loop) fail(c *loopConn, op string, err error) {
	l.closeFd(c)
	c.s = sample{label: c.label, lag: time.Duration(c.lag)}
	c.conn.fail(op, err, c.warm)
}

func (l *loop) failNext(c *loopConn, op string, err error) {
	l.fail(c, op, err)
	l.next(c)
}

// expire fails requests older than the timeout, as the goroutine engine's
// socket deadlines do.
func (l *loop) expire(now int64) {
	limit := now - int64(l.r.cfg.Timeout)
	for _, c := range l.conns {
		if (c.st == lcConnecting || c.st == lcWriting || c.st == lcReading) && c.sent <= limit {
			op := "read"
			if c.st == lcConnecting {
				op = "connect"
			}
			l.failNext(c, op, os.ErrDeadlineExceeded)
		}
	}
}
