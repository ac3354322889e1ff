package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

const (
	readBufferSize = 16 << 10
	// sleepSlice bounds how long a connection sleeps before re-checking
	// whether the run was cancelled.
	sleepSlice = 100 * time.Millisecond
	// reqSeedSalt separates a connection's request RNG (Go workloads, think
	// times) from its arrivals RNG, so exp arrivals, and with them Due, do
	// not depend on how many requests were actually built.
	reqSeedSalt = 0x9e3779b97f4a7c15
)

type run struct {
	cfg    *Config
	ctx    context.Context
	target Target
	sched  Schedule // open loop only; begins with the warm-up segment
	start  time.Time
	meas   time.Time // end of warm-up
	end    time.Time // nothing scheduled at or after this is due
	// hardEnd bounds socket deadlines: a request sent before the end is
	// waited for up to the timeout, and no longer.
	hardEnd time.Time
	// measNs and endNs are meas and end in ns after start, the engines'
	// time base.
	measNs, endNs int64
	threads       []*thread
	all           []*conn
	conns         int
	stop          atomic.Bool
	// stopAt is when the run was interrupted; it is written before stop
	// is set and read only after stop was seen set.
	stopAt time.Time
	budget atomic.Int64 // closed loop: requests left when MaxRequests is set
	cpu    cpuMark
	script *Script
	// engine is the run's engine, chosen once so that the run and
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
	r    *run
	t    *thread
	idx  int
	addr string
	// mu guards nc and its deadline against interrupt's wake-up; the
	// owning goroutine reads them without it.
	mu     sync.Mutex
	nc     net.Conn
	br     *bufio.Reader
	rng    *rand.Rand // arrivals (exp distribution)
	reqRng *rand.Rand // requests (Go workloads) and think times
	src    requestSource
	// pause is a UserWorkload user's own wait after an answer (nil: none)
	pause    func(*rand.Rand) time.Duration
	resp     response
	deadline time.Time
	capture  bool
	s        sample
	timer    *preciseTimer // nil: time.Sleep only
	// freeAt is when the connection last became free (previous response
	// or failure, ns after start): the origin of lag, and what tells a
	// busy connection at the end of the window from an idle one.
	freeAt int64
	tally  windowTally
	peers  peerTally
	// stamp reads through recvmsg to learn when answers arrived (nil
	// where the kernel gives no stamps); goroutine engine only.
	stamp *stampedConn
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
	r := &run{cfg: &cfg, ctx: ctx, target: target, conns: cfg.Connections}
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
		if cfg.Closed != nil && cfg.Closed.TimeoutLatency {
			t.meas.timeoutUs, t.warm.timeoutUs = cfg.Timeout.Microseconds(), cfg.Timeout.Microseconds()
		}
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
		c := &conn{r: r, t: t, idx: i, addr: t.addr,
			rng: rand.New(rand.NewPCG(seed, uint64(i))), reqRng: rand.New(rand.NewPCG(seed^reqSeedSalt, uint64(i)))}
		if len(cfg.Hosts) > 0 && (t.script == nil || t.script.addr == "") {
			c.addr = cfg.Hosts[i%len(cfg.Hosts)]
		}
		c.src, c.pause, err = r.sourceFor(t, i)
		if err != nil {
			return nil, err
		}
		c.capture = t.script != nil && t.script.hasResponse
		if !cfg.CoarseTimers && r.engine == EngineGoroutine {
			c.timer = newPreciseTimer()
		}
		conns[i] = c
	}

	r.all = conns
	stopWatch := context.AfterFunc(ctx, func() { r.interrupt(conns) })
	defer stopWatch()
	seriesDone := make(chan struct{})
	seriesOut := make(chan []SeriesPoint, 1)
	cpuMarked := make(chan struct{})
	started := func() {
		go func() { seriesOut <- r.collectSeries(seriesDone) }()
		go func() { r.cpu.markAt(r.meas, seriesDone); close(cpuMarked) }()
	}
	if r.engine == EngineLoop {
		if err := r.runLoops(conns, started); err != nil {
			return nil, err
		}
	} else {
		r.runGoroutines(conns, started)
	}
	if cfg.Closed == nil || r.closedRunsToTheEnd() {
		// A trailing idle phase sends nothing but is still part of the
		// run: the series should show it. So are a closed loop's users
		// thinking past the end (a pause of seconds after their last
		// answer): the window is the duration, not the last answer.
		for time.Now().Before(r.end) && !r.stop.Load() {
			time.Sleep(min(time.Until(r.end), sleepSlice))
		}
	}
	finished := time.Now()
	close(seriesDone)
	series := <-seriesOut
	<-cpuMarked
	r.cpu.end()

	res := r.result(finished, series)
	if r.script != nil {
		if err := r.script.callDone(res); err != nil {
			return res, err
		}
	}
	return res, ctx.Err()
}

// pickEngine picks the run's engine. The loop is the default when it has
// a spare P (see runLoops): in paired bench-loadgen rounds against wrk on
// the quiet 2-core machine it sustained 0.925 of wrk's throughput at
// 20.2 µs CPU/request, goroutines at GOMAXPROCS=1 0.85 at 22.8 µs. With
// one P the loop's blocking epoll costs a P hand-off per wait, so
// goroutines stay. The closed loop follows the same rule: at -t2 -c64
// against the hello server (bench-loadgen cpu, 5 rounds) the loop spent a
// median 5.2 µs CPU per request, goroutines 8.6 and wrk 6.8.
func (c *Config) pickEngine() string {
	if !eventLoopAvailable() {
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
	r.hardEnd = r.end.Add(r.cfg.Timeout)
	r.measNs, r.endNs = int64(r.cfg.Warmup), int64(r.cfg.Warmup+r.cfg.Duration)
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

// sourceFor makes connection i's requests, and its user's own pause when
// the workload keeps a user per connection.
func (r *run) sourceFor(t *thread, i int) (requestSource, func(*rand.Rand) time.Duration, error) {
	cfg := r.cfg
	host := r.target.HostHeader()
	switch {
	case t.script != nil:
		if !t.script.dynamic {
			raw := t.script.static
			if cfg.ConnectionClose {
				raw = withConnectionClose(raw)
			}
			return &staticSource{raw: raw, label: labelFromRequest(raw)}, nil, nil
		}
		return &scriptSource{ts: t.script, closeConn: cfg.ConnectionClose}, nil, nil
	case cfg.Workload != nil:
		w, pause := cfg.Workload, (func(*rand.Rand) time.Duration)(nil)
		if uw, ok := w.(UserWorkload); ok {
			u := uw.NewUser(i)
			w, pause = WorkloadFunc(u.Next), u.Pause
		}
		return &workloadSource{w: w, defMethod: cfg.Method, host: host, headers: cfg.Headers, closeConn: cfg.ConnectionClose}, pause, nil
	}
	var body []byte
	if len(cfg.Body) > 0 {
		body = cfg.Body
	}
	raw := appendRequest(nil, cfg.Method, r.target.Path, host, cfg.Headers, body, cfg.ConnectionClose)
	return &staticSource{raw: raw, label: labelFromRequest(raw)}, nil, nil
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

// think is a closed-loop user's wait after an answer: the think time (drawn
// when a range), a script's delay(), and a user workload's own pause.
func (c *conn) think() time.Duration {
	cl := c.r.cfg.Closed
	think := cl.ThinkMin
	if cl.ThinkMax > cl.ThinkMin {
		think += time.Duration(c.rng.Int64N(int64(cl.ThinkMax-cl.ThinkMin) + 1))
	}
	if c.t.script != nil && c.t.script.hasDelay {
		think += c.t.script.delay()
	}
	if c.pause != nil {
		think += c.pause(c.reqRng)
	}
	return think
}

// closedRunsToTheEnd is a closed loop that ends at its duration: no count
// ends it sooner and no script thread stopped itself.
func (r *run) closedRunsToTheEnd() bool {
	if cl := r.cfg.Closed; cl == nil || cl.MaxRequests > 0 || cl.Iterations > 0 {
		return false
	}
	for _, t := range r.threads {
		if t.stopped.Load() {
			return false
		}
	}
	return true
}

func (c *conn) halted() bool { return c.r.stop.Load() || c.t.stopped.Load() }

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

// fail records a failed request. One cut by the interruption is a
// timeout of class "cancelled": sent, and never answered.
func (c *conn) fail(op string, err error, warm bool) {
	c.close()
	c.freeAt = int64(time.Since(c.r.start))
	if op == "connect" {
		c.freeAt += int64(retryPause)
	}
	c.s.failed, c.s.failedOp, c.s.class = true, op, classify(op, err)
	if c.r.stopped() {
		c.s.class = errCancelled
	}
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
