package loadgen

import (
	"fmt"
	"net"
	"time"
)

// Config describes one run. The zero values of optional fields mean wrk's
// defaults (2 threads, 10 connections, 10 s, 2 s timeout).
type Config struct {
	URL string
	// Hosts, when set, are the host:port addresses dialled instead of the
	// URL's: connection i dials Hosts[i % len(Hosts)], so the connections
	// of a horizontally scaled deployment are spread over its instances.
	// The URL still gives the scheme, path and Host header, and a Lua
	// script's wrk.connect address (per thread) still wins.
	Hosts       []string
	Threads     int
	Connections int
	// Duration is the measured period; Phases, when set, replace
	// Duration and Rate in open loop.
	Duration time.Duration
	// Rate is the total offered rate in requests per second, split evenly
	// over the connections (wrk2's -R). Required in open loop unless Phases
	// are given.
	Rate   float64
	Phases []Phase
	// Distribution of inter-arrival times per connection: "fixed" (wrk2) or
	// "exp" (Poisson arrivals, as DeathStarBench's wrk2 -D exp).
	Distribution string
	// Warmup is run before the measured period at the schedule's initial
	// rate (or by the same closed-loop users) and summarised separately.
	Warmup  time.Duration
	Timeout time.Duration

	Method  string // default GET
	Headers []Header
	Body    []byte

	// ConnectionClose opens a new connection for every request.
	ConnectionClose bool

	// ScriptPath/ScriptSource give a wrk Lua script (the source wins if both
	// are set); ScriptArgs are passed to its init(args).
	ScriptPath   string
	ScriptSource string
	ScriptArgs   []string
	// Workload supplies requests from Go; it excludes a script.
	Workload     Workload
	WorkloadName string // echoed in the result

	// Closed switches to closed loop: users that wait for each reply.
	Closed *Closed

	// Targets outside 127.0.0.0/8 (and ::1) are refused unless AllowRemote
	// is set or the host, address or CIDR is listed in AllowedHosts.
	AllowRemote  bool
	AllowedHosts []string

	// SeriesInterval is the bucket width of Result.Series (default 1 s).
	SeriesInterval time.Duration
	// MaxEndpoints bounds the per-endpoint breakdown; later labels are
	// counted under "(other)" (default 100).
	MaxEndpoints int
	// CoarseTimers waits with time.Sleep alone, which can send up to a
	// millisecond late when the process is idle (see timer_linux.go).
	CoarseTimers bool
	// PreciseTimerMaxRate is the offered rate (req/s) above which waits
	// use runtime timers even without CoarseTimers (default 5000).
	PreciseTimerMaxRate float64
	// Engine runs the open or closed loop on EngineLoop (epoll loops, as
	// wrk2's; Linux only), EngineGoroutine (a goroutine per connection) or
	// EngineAuto ("" too): the loop when GOMAXPROCS >= 2, else goroutines.
	Engine string
	// Seed makes the per-connection RNGs reproducible. Each connection has
	// two streams: one for arrivals (exp inter-arrival and think times),
	// one for requests (Go workloads), so the requests a workload draws
	// do not move the schedule and Due stays a function of the seed.
	// 0 picks one from the clock.
	Seed uint64
}

// Engines of the open and closed loops.
const (
	EngineAuto      = "auto"
	EngineLoop      = "loop"
	EngineGoroutine = "goroutine"
)

// Closed configures closed-loop users (Fortio -qps -1, JMeter threads ×
// loops, Locust users). Users equals Config.Connections unless set. The run
// stops at the first of Config.Duration, MaxRequests in total, or Iterations
// per user; at least one must be set.
type Closed struct {
	Users       int           `json:"users"`
	ThinkMin    time.Duration `json:"think_min_ns"`
	ThinkMax    time.Duration `json:"think_max_ns"` // uniform in [min, max]; equal for fixed
	MaxRequests int64         `json:"max_requests,omitempty"`
	Iterations  int64         `json:"iterations,omitempty"`
	SpawnRate   float64       `json:"spawn_rate,omitempty"` // users started per second; 0 = all at once
	// TimeoutLatency records a request that timed out at the timeout in
	// the latency histograms, besides counting it as an error, as JMeter
	// reports do (study 004 counted a 1 s timeout as 1000 ms).
	TimeoutLatency bool `json:"timeout_latency,omitempty"`
}

// maxUnboundedRun caps a closed-loop run bounded only by counts, so a stuck
// server cannot keep the generator running forever.
const maxUnboundedRun = time.Hour

func (c *Config) normalize() error {
	if c.Threads <= 0 {
		c.Threads = 2
	}
	if c.Connections <= 0 {
		c.Connections = 10
	}
	if c.Closed != nil && c.Closed.Users > 0 {
		c.Connections = c.Closed.Users
	}
	if c.Connections < c.Threads {
		return fmt.Errorf("connections (%d) must be at least threads (%d)", c.Connections, c.Threads)
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Second
	}
	if c.Method == "" {
		c.Method = "GET"
	}
	if c.SeriesInterval <= 0 {
		c.SeriesInterval = time.Second
	}
	if c.PreciseTimerMaxRate <= 0 {
		c.PreciseTimerMaxRate = 5000
	}
	if c.MaxEndpoints <= 0 {
		c.MaxEndpoints = 100
	}
	switch c.Distribution {
	case "":
		c.Distribution = "fixed"
	case "fixed", "exp":
	default:
		return fmt.Errorf("distribution %q: want fixed or exp", c.Distribution)
	}
	switch c.Engine {
	case "", EngineAuto, EngineLoop, EngineGoroutine:
	default:
		return fmt.Errorf("engine %q: want %s, %s or %s", c.Engine, EngineAuto, EngineLoop, EngineGoroutine)
	}
	if c.Warmup < 0 {
		return fmt.Errorf("negative warm-up")
	}
	for _, h := range c.Hosts {
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			return fmt.Errorf("host %q: want host:port", h)
		}
	}
	if c.Workload != nil && (c.ScriptPath != "" || c.ScriptSource != "") {
		return fmt.Errorf("a Go workload and a Lua script exclude each other")
	}
	if c.Closed != nil {
		cl := c.Closed
		if cl.ThinkMax < cl.ThinkMin {
			cl.ThinkMax = cl.ThinkMin
		}
		if c.Duration <= 0 && cl.MaxRequests <= 0 && cl.Iterations <= 0 {
			return fmt.Errorf("closed loop needs a duration, a request count or an iteration count")
		}
		if c.Duration <= 0 {
			c.Duration = maxUnboundedRun
		}
		return nil
	}
	if len(c.Phases) == 0 {
		if c.Rate <= 0 {
			return fmt.Errorf("open loop needs a rate (-R) or phases")
		}
		if c.Duration <= 0 {
			c.Duration = 10 * time.Second
		}
		c.Phases = []Phase{{Dur: c.Duration, From: c.Rate, To: c.Rate}}
	} else {
		c.Duration = 0
		for _, p := range c.Phases {
			if p.Dur <= 0 || p.From < 0 || p.To < 0 {
				return fmt.Errorf("bad phase %s", p)
			}
			c.Duration += p.Dur
		}
	}
	return nil
}

func (c *Config) echo() ConfigEcho {
	e := ConfigEcho{
		URL: c.URL, Hosts: c.Hosts, Mode: "open", Threads: c.Threads, Connections: c.Connections,
		DurationSeconds: c.Duration.Seconds(), Rate: c.Rate, Distribution: c.Distribution,
		WarmupSeconds: c.Warmup.Seconds(), TimeoutSeconds: c.Timeout.Seconds(),
		Headers: c.Headers, Script: c.ScriptPath, ScriptArgs: c.ScriptArgs,
		Workload: c.WorkloadName, ConnectionClose: c.ConnectionClose,
	}
	if c.ScriptPath == "" && c.ScriptSource != "" {
		e.Script = "(inline)"
	}
	if c.Closed != nil {
		e.Mode = "closed"
		cl := *c.Closed
		cl.Users = c.Connections
		e.Closed = &cl
		e.Distribution = ""
	} else {
		e.Phases = c.Phases
	}
	return e
}
