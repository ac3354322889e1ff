package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// -w names come from loadgen's registry. DeathStarBench's social-network
// mixes (deathstarbench/socialnetwork/workload, FromSpec) do not register
// themselves yet; once a package calls loadgen.RegisterWorkload from its
// init, a blank import here makes them available to -w.

// loadFlags mirrors wrk2's command line (with DeathStarBench's -D) and adds
// orchbench's closed loop, phases, warm-up and JSON output.
type loadFlags struct {
	threads, connections int
	duration             string
	rate                 float64
	dist                 string
	latency, uLatency    bool
	timeout              string
	headers              []string
	script               string
	workload             string
	hosts                []string
	method, body         string

	jsonOut    bool
	outFile    string
	extended   bool
	warmup     string
	phases     string
	connClose  bool
	seed       uint64
	interval   string
	coarse     bool
	engine     string
	procs      int
	remote     bool
	allowHosts []string

	closed         bool
	think          string
	requests       int64
	iterations     int64
	timeoutLatency bool
	spawnRate      float64
}

func init() { rootCmd.AddCommand(newLoadCmd()) }

// newLoadCmd builds the command with its own flag set, so tests get fresh
// flags for every run.
func newLoadCmd() *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load [flags] URL [script args...]",
		Short: "Generate wrk2-style HTTP load (open or closed loop) and report latency",
		Long: `load drives an HTTP/1.1 endpoint like wrk2: every connection follows its own
constant-throughput schedule and latency is measured from the scheduled send
time (coordinated-omission corrected). Output reads like wrk2's; --json emits
the full result (histograms, per-endpoint stats, per-second series).

Targets must be on loopback unless --allow-remote or --allow-host is given.`,
		Example: `  orchbench load -t2 -c16 -d10s -R500 -L http://127.0.0.1:8080/
  orchbench load -t2 -c64 --phases "10s@100,20s@100->500,5s@0" --json http://127.0.0.1:8080/
  orchbench load -c8 --closed --think 50ms-150ms -d30s http://127.0.0.1:8080/
  orchbench load -t2 -c32 -d30s -R200 -D exp -s compose-post.lua http://127.0.0.1:8080/
  orchbench load -t2 -c32 -d30s -R200 -w get-paths:/a,/b --hosts 127.0.0.1:8081,127.0.0.1:8082 http://127.0.0.1:8081/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLoad(cmd, f, args) },
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.threads, "threads", "t", 2, "number of threads (connection groups, one Lua state each)")
	fl.IntVarP(&f.connections, "connections", "c", 10, "connections to keep open (closed loop: users)")
	fl.StringVarP(&f.duration, "duration", "d", "10s", "measured duration (2s, 2m, 2h or seconds)")
	fl.Float64VarP(&f.rate, "rate", "R", 0, "total requests/s, split over connections (required for open loop)")
	fl.StringVarP(&f.dist, "dist", "D", "fixed", "inter-arrival distribution per connection: fixed or exp")
	fl.BoolVarP(&f.latency, "latency", "L", false, "print the latency percentiles and spectrum")
	fl.BoolVarP(&f.uLatency, "u_latency", "U", false, "also print uncorrected latency")
	fl.StringVar(&f.timeout, "timeout", "2s", "socket/request timeout")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "add a header 'Name: value' (repeatable)")
	fl.StringVarP(&f.script, "script", "s", "", "wrk Lua script")
	fl.StringVarP(&f.workload, "workload", "w", "", "Go workload NAME[:ARGS] instead of a script (registered: "+strings.Join(loadgen.WorkloadNames(), ", ")+")")
	fl.StringSliceVar(&f.hosts, "hosts", nil, "host:port list to spread connections over round-robin; the URL still gives path and Host header")
	fl.StringVar(&f.method, "method", "GET", "request method when no script is used")
	fl.StringVar(&f.body, "body", "", "request body when no script is used")

	fl.BoolVar(&f.jsonOut, "json", false, "print the result as JSON instead of the text report")
	fl.StringVarP(&f.outFile, "output", "o", "", "also write the JSON result to this file")
	fl.BoolVar(&f.extended, "extended", false, "append per-endpoint, status-code and error-class sections to the text report")
	fl.StringVar(&f.warmup, "warmup", "0s", "warm-up period before measuring, reported separately")
	fl.StringVar(&f.phases, "phases", "", `open-loop rate phases, e.g. "10s@100,20s@100->500,5s@0" (replaces -d/-R)`)
	fl.BoolVar(&f.connClose, "connection-close", false, "open a new connection for every request")
	fl.Uint64Var(&f.seed, "seed", 0, "seed for per-connection RNGs (0: from the clock)")
	fl.StringVar(&f.interval, "interval", "1s", "bucket width of the per-interval series")
	fl.BoolVar(&f.coarse, "coarse-timers", false, "wait with the Go timer only (up to 1ms late when idle; fewer syscalls)")
	fl.StringVar(&f.engine, "engine", loadgen.EngineAuto, "engine of the open or closed loop: loop (epoll loops, as wrk2), goroutine (one per connection) or auto (loop when GOMAXPROCS >= 2)")
	fl.IntVar(&f.procs, "procs", 0, "GOMAXPROCS for the generator (0: Go's default, which follows the cgroup's CPU limit)")
	fl.BoolVar(&f.remote, "allow-remote", false, "allow targets outside loopback")
	fl.StringArrayVar(&f.allowHosts, "allow-host", nil, "allow this non-loopback host, address or CIDR (repeatable)")

	fl.BoolVar(&f.closed, "closed", false, "closed loop: each connection is a user waiting for every reply")
	fl.StringVar(&f.think, "think", "0s", "closed loop think time: fixed (100ms) or uniform range (50ms-150ms)")
	fl.Int64Var(&f.requests, "requests", 0, "closed loop: stop after this many requests in total")
	fl.Int64Var(&f.iterations, "iterations", 0, "closed loop: stop each user after this many requests")
	fl.BoolVar(&f.timeoutLatency, "timeout-latency", false, "closed loop: record a timed-out request at the timeout in the latency figures (JMeter's way), besides counting it as an error")
	fl.Float64Var(&f.spawnRate, "spawn-rate", 0, "closed loop: users started per second (0: all at once)")
	return cmd
}

func runLoad(cmd *cobra.Command, f loadFlags, args []string) error {
	cfg, err := f.config(cmd, args)
	if err != nil {
		return err
	}
	if f.procs > 0 {
		runtime.GOMAXPROCS(f.procs)
	}
	// SIGTERM is how Nomad stops the load job: like Ctrl-C it ends the
	// run early, and the partial result is still written.
	base := cmd.Context()
	if base == nil {
		base = context.Background()
	}
	ctx, stop := signal.NotifyContext(base, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, runErr := loadgen.Run(ctx, cfg)
	if res == nil {
		return runErr
	}
	if res.Interrupted {
		// Non-zero exit, so a caller never takes the partial result for
		// a whole one; errors of the server, by contrast, are measurements.
		runErr = fmt.Errorf("load interrupted after %.1fs of %.1fs: the result written is partial", res.DurationSeconds, res.Config.DurationSeconds)
	}
	if f.outFile != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.outFile, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if f.jsonOut {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else if err := loadgen.WriteText(out, res, loadgen.ReportOptions{Latency: f.latency, UncorrectedLatency: f.uLatency, Extended: f.extended}); err != nil {
		return err
	}
	return runErr
}

func (f loadFlags) config(cmd *cobra.Command, args []string) (loadgen.Config, error) {
	cfg := loadgen.Config{
		URL: args[0], ScriptArgs: args[1:], Threads: f.threads, Connections: f.connections,
		Rate: f.rate, Distribution: f.dist, Method: f.method, ScriptPath: f.script,
		ConnectionClose: f.connClose, CoarseTimers: f.coarse, Seed: f.seed, AllowRemote: f.remote, AllowedHosts: f.allowHosts,
		Hosts: f.hosts, Engine: f.engine,
	}
	if f.workload != "" {
		if f.script != "" {
			return cfg, fmt.Errorf("-s/--script and -w/--workload both choose the requests; give one or the other")
		}
		w, err := loadgen.WorkloadByName(f.workload)
		if err != nil {
			return cfg, err
		}
		cfg.Workload, cfg.WorkloadName = w, f.workload
	}
	if f.body != "" {
		cfg.Body = []byte(f.body)
	}
	var err error
	if cfg.Duration, err = loadgen.ParseDuration(f.duration); err != nil {
		return cfg, err
	}
	if cfg.Timeout, err = loadgen.ParseDuration(f.timeout); err != nil {
		return cfg, err
	}
	if cfg.Warmup, err = loadgen.ParseDuration(f.warmup); err != nil {
		return cfg, err
	}
	if cfg.SeriesInterval, err = loadgen.ParseDuration(f.interval); err != nil {
		return cfg, err
	}
	for _, h := range f.headers {
		hh, err := loadgen.ParseHeader(h)
		if err != nil {
			return cfg, err
		}
		cfg.Headers = append(cfg.Headers, hh)
	}
	if f.phases != "" {
		if cmd.Flags().Changed("rate") || cmd.Flags().Changed("duration") {
			return cfg, fmt.Errorf("--phases replaces -R and -d; give one or the other")
		}
		if cfg.Phases, err = loadgen.ParsePhases(f.phases); err != nil {
			return cfg, err
		}
	}
	if f.closed {
		if f.phases != "" || cmd.Flags().Changed("rate") {
			return cfg, fmt.Errorf("--closed runs without a rate; drop -R/--phases")
		}
		cl := &loadgen.Closed{MaxRequests: f.requests, Iterations: f.iterations, SpawnRate: f.spawnRate, TimeoutLatency: f.timeoutLatency}
		if cl.ThinkMin, cl.ThinkMax, err = parseThink(f.think); err != nil {
			return cfg, err
		}
		if (f.requests > 0 || f.iterations > 0) && !cmd.Flags().Changed("duration") {
			cfg.Duration = 0 // bounded by the counts (and a safety cap)
		}
		cfg.Closed = cl
	} else if f.phases == "" && f.rate <= 0 {
		return cfg, fmt.Errorf("open loop needs -R requests/s (or --phases, or --closed for a closed loop)")
	}
	return cfg, nil
}

// parseThink reads "100ms" or "50ms-150ms".
func parseThink(s string) (lo, hi time.Duration, err error) {
	a, b, isRange := strings.Cut(s, "-")
	if lo, err = loadgen.ParseDuration(a); err != nil {
		return 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = loadgen.ParseDuration(b); err != nil {
			return 0, 0, err
		}
	}
	if lo < 0 || hi < lo {
		return 0, 0, fmt.Errorf("bad think time %q", s)
	}
	return lo, hi, nil
}
