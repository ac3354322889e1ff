package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A goroutine per connection, each running its own slice of the schedule,
// with a hand-rolled HTTP/1.1 wire: the Go runtime's netpoller already is an
// epoll loop, and this shape keeps the hot path free of allocations and of
// any hand-off between goroutines.

const (
	readBufferSize = 16 << 10
	// sleepSlice bounds how long a connection sleeps before re-checking
	// whether the run was cancelled.
	sleepSlice = 100 * time.Millisecond
	// maxGrace is how long in-flight requests may finish after the last
	// send; they are cut (and not counted) after that.
	maxGrace = time.Second
)

type run struct {
	cfg     *Config
	target  Target
	sched   Schedule // open loop only; begins with the warm-up segment
	start   time.Time
	meas    time.Time // end of warm-up
	end     time.Time // no new request after this
	hardEnd time.Time // in-flight requests are abandoned after this
	threads []*thread
	conns   int
	stop    atomic.Bool
	budget  atomic.Int64 // closed loop: requests left when MaxRequests is set
	// due counts open-loop requests whose scheduled time fell in the
	// measured window, sent or not: with exp arrivals their number is
	// random, so achieved must be compared with it, not the nominal rate.
	due    atomic.Int64
	script *Script
	// engine is the open loop's engine, chosen once so that the run and
	// its recorded config cannot disagree.
	engine string
}

type thread struct {
	id      int
	mu      sync.Mutex // guards meas, warm and iv
	meas    *recorder
	warm    *recorder
	iv      interval
	script  *threadScript
	addr    string
	stopped atomic.Bool
}

type conn struct {
	r        *run
	t        *thread
	idx      int
	addr     string
	nc       net.Conn
	br       *bufio.Reader
	rng      *rand.Rand
	src      requestSource
	resp     response
	deadline time.Time
	capture  bool
	s        sample
	timer    *preciseTimer // nil: time.Sleep only
}

// Run executes one load run and returns its result. It always ends: open
// loop when the schedule does, closed loop at the duration or counts given.
// On cancellation the partial result is returned with the context's error.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	target, err := ParseTarget(cfg.URL)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: &cfg, target: target, conns: cfg.Connections}
	r.engine = cfg.pickEngine()
	if err := checkAllowed(target.DialAddr(), cfg.AllowRemote, cfg.AllowedHosts); err != nil {
		return nil, err
	}
	if cfg.ScriptPath != "" || cfg.ScriptSource != "" {
		r.script, err = LoadScript(ScriptOptions{
			Path: cfg.ScriptPath, Source: cfg.ScriptSource, Target: target,
			Headers: cfg.Headers, Threads: cfg.Threads, Args: cfg.ScriptArgs,
			Allowed: func(addr string) error { return checkAllowed(addr, cfg.AllowRemote, cfg.AllowedHosts) },
		})
		if err != nil {
			return nil, err
		}
		defer r.script.Close()
	}
	for i := 0; i < cfg.Threads; i++ {
		t := &thread{id: i, meas: newRecorder(cfg.MaxEndpoints), warm: newRecorder(cfg.MaxEndpoints), addr: target.DialAddr()}
		t.iv.hist = newLatencyHist()
		if r.script != nil {
			t.script = r.script.threads[i]
			t.script.stopped = &t.stopped
			if t.script.addr != "" {
				t.addr = t.script.addr
			}
		}
		if err := checkAllowed(t.addr, cfg.AllowRemote, cfg.AllowedHosts); err != nil {
			return nil, err
		}
		r.threads = append(r.threads, t)
	}
	for _, h := range cfg.Hosts {
		if err := checkAllowed(h, cfg.AllowRemote, cfg.AllowedHosts); err != nil {
			return nil, err
		}
	}
	if cfg.Closed == nil {
		r.sched = r.openSchedule()
	} else {
		r.budget.Store(cfg.Closed.MaxRequests)
	}

	conns := make([]*conn, cfg.Connections)
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	for i := range conns {
		// Connections are dealt to threads in blocks, as wrk does.
		t := r.threads[i*cfg.Threads/cfg.Connections]
		c := &conn{r: r, t: t, idx: i, addr: t.addr, rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		if len(cfg.Hosts) > 0 && (t.script == nil || t.script.addr == "") {
			c.addr = cfg.Hosts[i%len(cfg.Hosts)]
		}
		c.src, err = r.sourceFor(t)
		if err != nil {
			return nil, err
		}
		c.capture = t.script != nil && t.script.hasResponse
		if !cfg.CoarseTimers && r.engine == EngineGoroutine {
			c.timer = newPreciseTimer()
		}
		conns[i] = c
	}

	stopWatch := context.AfterFunc(ctx, func() { r.stop.Store(true) })
	defer stopWatch()
	seriesDone := make(chan struct{})
	seriesOut := make(chan []SeriesPoint, 1)
	if r.engine == EngineLoop {
		if err := r.runLoops(conns, func() { go func() { seriesOut <- r.collectSeries(seriesDone) }() }); err != nil {
			return nil, err
		}
	} else {
		r.runGoroutines(conns, func() { go func() { seriesOut <- r.collectSeries(seriesDone) }() })
	}
	if cfg.Closed == nil {
		// A trailing idle phase sends nothing but is still part of the
		// run: the series should show it.
		for time.Now().Before(r.end) && !r.stop.Load() {
			time.Sleep(min(time.Until(r.end), sleepSlice))
		}
	}
	finished := time.Now()
	close(seriesDone)
	series := <-seriesOut

	res := r.result(finished, series)
	if r.script != nil {
		if err := r.script.callDone(res); err != nil {
			return res, err
		}
	}
	return res, ctx.Err()
}

// pickEngine picks the open loop's engine. The loop is the default when it has
// a spare P (see runLoops): in paired bench-loadgen rounds against wrk on
// the quiet 2-core machine it sustained 0.925 of wrk's throughput at
// 20.2 µs CPU/request, goroutines at GOMAXPROCS=1 0.85 at 22.8 µs. With
// one P the loop's blocking epoll costs a P hand-off per wait, so
// goroutines stay. The closed loop always uses goroutines.
func (c *Config) pickEngine() string {
	if c.Closed != nil || !eventLoopAvailable() {
		return EngineGoroutine
	}
	switch c.Engine {
	case EngineLoop, EngineGoroutine:
		return c.Engine
	}
	if runtime.GOMAXPROCS(0) >= 2 {
		return EngineLoop
	}
	return EngineGoroutine
}

// startClock fixes the run's time line, once the connections are up.
func (r *run) startClock() {
	r.start = time.Now()
	r.meas = r.start.Add(r.cfg.Warmup)
	r.end = r.meas.Add(r.cfg.Duration)
	grace := r.cfg.Timeout
	if grace > maxGrace {
		grace = maxGrace
	}
	r.hardEnd = r.end.Add(grace)
}

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

func (r *run) openSchedule() Schedule {
	parts := make([]Schedule, 0, len(r.cfg.Phases)+1)
	if r.cfg.Warmup > 0 {
		rate := 0.0
		for _, p := range r.cfg.Phases {
			if p.From > 0 || p.To > 0 {
				rate = p.From
				if rate == 0 {
					rate = p.To
				}
				break
			}
		}
		parts = append(parts, Constant{Rate: rate, Dur: r.cfg.Warmup})
	}
	for _, p := range r.cfg.Phases {
		parts = append(parts, p.schedule())
	}
	return NewPhases(parts...)
}

func (r *run) sourceFor(t *thread) (requestSource, error) {
	cfg := r.cfg
	host := r.target.HostHeader()
	switch {
	case t.script != nil:
		if !t.script.dynamic {
			raw := t.script.static
			if cfg.ConnectionClose {
				raw = withConnectionClose(raw)
			}
			return &staticSource{raw: raw, label: labelFromRequest(raw)}, nil
		}
		return &scriptSource{ts: t.script, closeConn: cfg.ConnectionClose}, nil
	case cfg.Workload != nil:
		return &workloadSource{w: cfg.Workload, defMethod: cfg.Method, host: host, headers: cfg.Headers, closeConn: cfg.ConnectionClose}, nil
	}
	var body []byte
	if len(cfg.Body) > 0 {
		body = cfg.Body
	}
	raw := appendRequest(nil, cfg.Method, r.target.Path, host, cfg.Headers, body, cfg.ConnectionClose)
	return &staticSource{raw: raw, label: labelFromRequest(raw)}, nil
}

// withConnectionClose inserts "Connection: close" into a formatted request.
func withConnectionClose(raw []byte) []byte {
	i := bytes.Index(raw, []byte("\r\n\r\n"))
	if i < 0 {
		return raw
	}
	out := append([]byte(nil), raw[:i+2]...)
	out = append(out, "Connection: close\r\n"...)
	return append(out, raw[i+2:]...)
}

func (c *conn) dial() error {
	d := net.Dialer{Timeout: c.r.cfg.Timeout}
	nc, err := d.Dial("tcp", c.addr)
	if err != nil {
		return err
	}
	c.nc = nc
	c.deadline = time.Time{}
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, readBufferSize)
	} else {
		c.br.Reset(nc)
	}
	return nil
}

func (c *conn) close() {
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
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

func (c *conn) halted() bool { return c.r.stop.Load() || c.t.stopped.Load() }

// sleepUntil waits for the wall-clock moment at, in slices so cancellation
// is noticed; it reports false when the run was stopped meanwhile.
func (c *conn) sleepUntil(at time.Time) bool {
	for {
		d := time.Until(at)
		if d <= 0 {
			return true
		}
		if c.halted() {
			return false
		}
		if d > sleepSlice {
			d = sleepSlice
		}
		if c.timer == nil || !c.r.precise(at) || !c.timer.sleep(at, d) {
			time.Sleep(d)
		}
	}
}

// nextHit advances this connection's position in the cumulative schedule.
// With fixed arrivals connection i takes hits i, i+n, i+2n…, which spreads
// the connections evenly over each interval; with exp arrivals each
// connection is its own Poisson process at 1/n of the rate.
func (c *conn) nextHit(h float64, first bool) float64 {
	n := float64(c.r.conns)
	if c.r.cfg.Distribution == "exp" {
		return h + n*c.rng.ExpFloat64()
	}
	if first {
		return float64(c.idx)
	}
	return h + n
}

func (c *conn) runOpen() {
	r := c.r
	h := c.nextHit(0, true)
	for ; ; h = c.nextHit(h, false) {
		off, ok := r.sched.TimeOf(h)
		if !ok || c.halted() {
			return
		}
		due := r.start.Add(off)
		if due.After(r.end) {
			return
		}
		if !due.Before(r.meas) {
			r.due.Add(1)
		}
		raw, label, err := c.src.next(c.rng)
		if err != nil {
			c.t.stopped.Store(true)
			return
		}
		if c.t.script != nil && c.t.script.hasDelay {
			due = due.Add(c.t.script.delay())
		}
		if !c.sleepUntil(due) {
			return
		}
		if !time.Now().Before(r.end) {
			// Behind schedule at the end: what was not sent is not
			// completed, which shows as achieved < due; it was still due.
			c.countUnsent(h)
			return
		}
		c.exchange(due, raw, label, due.Before(r.meas))
	}
}

// countUnsent counts this connection's hits after h that fell due in the
// window but were never sent because it was behind schedule.
func (c *conn) countUnsent(h float64) {
	r := c.r
	for h = c.nextHit(h, false); ; h = c.nextHit(h, false) {
		off, ok := r.sched.TimeOf(h)
		if !ok || r.start.Add(off).After(r.end) {
			return
		}
		r.due.Add(1)
	}
}

func (c *conn) runClosed() {
	r := c.r
	cl := r.cfg.Closed
	if cl.SpawnRate > 0 {
		if !c.sleepUntil(r.start.Add(secondsToDur(float64(c.idx) / cl.SpawnRate))) {
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
		raw, label, err := c.src.next(c.rng)
		if err != nil {
			c.t.stopped.Store(true)
			return
		}
		c.exchange(time.Now(), raw, label, warm)
		think := cl.ThinkMin
		if cl.ThinkMax > cl.ThinkMin {
			think += time.Duration(c.rng.Int64N(int64(cl.ThinkMax-cl.ThinkMin) + 1))
		}
		if c.t.script != nil && c.t.script.hasDelay {
			think += c.t.script.delay()
		}
		if think > 0 && !c.sleepUntil(time.Now().Add(think)) {
			return
		}
	}
}

// exchange sends one request and reads its response. due is the scheduled
// send time, from which the corrected latency is measured.
func (c *conn) exchange(due time.Time, raw []byte, label string, warm bool) {
	r := c.r
	s := &c.s
	*s = sample{label: label}
	sent := time.Now()
	if c.nc == nil {
		if err := c.dial(); err != nil {
			c.fail("connect", err, warm)
			// A refused connect returns at once; without a pause a
			// connection behind schedule would spin on the dead port.
			c.sleepUntil(time.Now().Add(time.Millisecond))
			return
		}
	}
	// Deadlines are refreshed only when they would cut this request short;
	// the 10 % slack makes that rare without letting a request wait much
	// longer than the timeout.
	if limit := sent.Add(r.cfg.Timeout); c.deadline.Before(limit) {
		dl := limit.Add(r.cfg.Timeout / 10)
		if dl.After(r.hardEnd) {
			dl = r.hardEnd
		}
		if !dl.Equal(c.deadline) {
			c.deadline = dl
			c.nc.SetDeadline(dl)
		}
	}
	if _, err := c.nc.Write(raw); err != nil {
		c.fail("write", err, warm)
		return
	}
	head := len(raw) > 5 && string(raw[:5]) == "HEAD "
	err := readResponse(c.br, head, c.capture, &c.resp)
	done := time.Now()
	if err != nil {
		if !done.Before(r.hardEnd) || r.stop.Load() {
			c.close() // cut at the end of the run, not a failure
			return
		}
		c.fail("read", err, warm)
		return
	}
	s.corrected, s.uncorrected = done.Sub(due), done.Sub(sent)
	s.status, s.bytes = c.resp.status, c.resp.bytes
	c.record(warm)
	if c.capture {
		c.t.script.response(c.resp.status, c.resp.headers, c.resp.body)
	}
	if c.resp.mustClose || r.cfg.ConnectionClose {
		c.close()
	}
}

func (c *conn) fail(op string, err error, warm bool) {
	c.close()
	if c.r.stop.Load() {
		return
	}
	c.s.failed, c.s.failedOp, c.s.class = true, op, classify(op, err)
	c.record(warm)
}

func (c *conn) record(warm bool) {
	t := c.t
	s := &c.s
	t.mu.Lock()
	if warm {
		t.warm.record(s)
	} else {
		t.meas.record(s)
	}
	if s.failed {
		t.iv.errors++
	} else {
		t.iv.completed++
		t.iv.bytes += s.bytes
		t.iv.hist.RecordValue(clampUs(s.corrected.Microseconds()))
	}
	t.mu.Unlock()
}

// collectSeries closes an interval every SeriesInterval, aligned on the run
// start, until done is closed; the last, partial interval is kept too.
func (r *run) collectSeries(done <-chan struct{}) []SeriesPoint {
	step := r.cfg.SeriesInterval
	merged := newLatencyHist()
	var out []SeriesPoint
	from := r.start
	timer := time.NewTimer(time.Until(from.Add(step)))
	defer timer.Stop()
	for {
		last := false
		to := from.Add(step)
		select {
		case <-timer.C:
		case <-done:
			last = true
			to = time.Now()
		}
		p := SeriesPoint{T: from.Sub(r.meas).Seconds(), Seconds: to.Sub(from).Seconds(), Warmup: from.Before(r.meas)}
		var completed int64
		for _, t := range r.threads {
			t.mu.Lock()
			completed += t.iv.completed
			p.Errors += t.iv.errors
			p.Bytes += t.iv.bytes
			merged.Merge(t.iv.hist)
			t.iv.hist.Reset()
			t.iv.completed, t.iv.errors, t.iv.bytes = 0, 0, 0
			t.mu.Unlock()
		}
		if p.Seconds > 0 {
			p.AchievedRate = float64(completed) / p.Seconds
			if r.sched != nil {
				p.OfferedRate = (r.sched.Hits(to.Sub(r.start)) - r.sched.Hits(from.Sub(r.start))) / p.Seconds
			}
		}
		if merged.TotalCount() > 0 {
			p.P50, p.P99 = merged.ValueAtPercentile(50), merged.ValueAtPercentile(99)
		}
		merged.Reset()
		if p.Seconds > 0.001 || completed > 0 || p.Errors > 0 {
			out = append(out, p)
		}
		if last {
			return out
		}
		from = to
		timer.Reset(time.Until(from.Add(step)))
	}
}

func (r *run) result(finished time.Time, series []SeriesPoint) *Result {
	cfg := r.cfg
	meas, warm := newRecorder(cfg.MaxEndpoints*len(r.threads)), newRecorder(cfg.MaxEndpoints*len(r.threads))
	for _, t := range r.threads {
		meas.merge(t.meas)
		warm.merge(t.warm)
	}
	res := &Result{Schema: ResultSchema, Tool: "orchbench-loadgen", Config: cfg.echo(), Start: r.meas, Series: series}
	res.Config.Engine, res.Config.Procs = r.engine, runtime.GOMAXPROCS(0)
	end := r.end
	if cfg.Closed != nil && finished.Before(end) {
		end = finished // stopped by a count
	}
	if end.Before(r.meas) {
		end = r.meas
	}
	res.End = end
	res.DurationSeconds = end.Sub(r.meas).Seconds()
	meas.fill(res)
	if res.DurationSeconds > 0 {
		res.AchievedRate = float64(res.Requests) / res.DurationSeconds
		if r.sched != nil {
			res.OfferedRate = (r.sched.Hits(r.sched.Duration()) - r.sched.Hits(cfg.Warmup)) / res.DurationSeconds
			res.DueRate = float64(r.due.Load()) / res.DurationSeconds
		}
	}
	if cfg.Warmup > 0 {
		w := &WarmupSummary{DurationSeconds: cfg.Warmup.Seconds(), Requests: warm.requests, Errors: warm.errorCounts()}
		w.AchievedRate = float64(warm.requests) / cfg.Warmup.Seconds()
		if r.sched != nil {
			w.OfferedRate = r.sched.Hits(cfg.Warmup) / cfg.Warmup.Seconds()
		}
		if warm.corrected.TotalCount() > 0 {
			w.P50, w.P99, w.Max = warm.corrected.ValueAtPercentile(50), warm.corrected.ValueAtPercentile(99), warm.corrected.Max()
		}
		res.Warmup = w
	}
	return res
}

// String is a one-line summary for logs.
func (res *Result) String() string {
	p99 := int64(0)
	for _, p := range res.Latency.Percentiles {
		if p.Percentile == 99 {
			p99 = p.Value
		}
	}
	return fmt.Sprintf("%d requests in %.2fs, %.1f req/s (offered %.1f), p99 %dus, errors %d",
		res.Requests, res.DurationSeconds, res.AchievedRate, res.OfferedRate, p99, res.Errors.Total())
}
