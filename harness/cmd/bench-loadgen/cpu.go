package main

// `bench-loadgen cpu` compares the generator's CPU time per request with
// wrk's and with a reference generator's, like with like, against the
// hello server in its own process. wrk has no rate, so the comparison with
// it is closed loop: the same threads, connections and duration, CPU
// divided by the requests each made. The open loop at a fixed rate is
// compared with a reference run of the same rate and request count: an
// earlier build's `orchbench load` (-reference) or, without one, this
// build's goroutine engine. Every contender runs once per round, back to
// back, so a ratio is taken between runs made within seconds of each
// other; the figures are the medians over the rounds, with their spread.
// CPU is each child's user + system time from its rusage (wait4), which
// leaves out the server; the server's CPU over each run, from
// /proc/PID/stat, is shown beside it. With -syscalls each contender runs
// once more under `perf stat`, counting system calls and context switches
// per request.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

const cpuMode = "cpu"

// contender is one generator configuration of the comparison.
type contender struct {
	name string
	// run makes one measured run and returns its requests (warm-up
	// included) and the child's CPU time; wrap, when set, prefixes the
	// command line (perf stat).
	run func(wrap []string) (requests int64, use usage, err error)
}

// cpuSample is one run of a contender.
type cpuSample struct {
	perReq    float64 // generator CPU ns per request
	serverReq float64 // server CPU ns per request over the same run
	rate      float64 // requests per second of wall time
}

func cpuBench(args []string) error {
	fs := flag.NewFlagSet(cpuMode, flag.ExitOnError)
	threads := fs.Int("t", 2, "generator and wrk threads")
	conns := fs.Int("c", 64, "connections")
	closedDur := fs.Duration("d", 5*time.Second, "length of each closed-loop run, wrk's and ours (whole seconds)")
	rate := fs.Float64("rate", 20000, "open-loop rate (req/s)")
	requests := fs.Int("requests", 100000, "requests per open-loop run (its duration is requests / rate)")
	rounds := fs.Int("runs", 3, "rounds; each runs every contender once")
	wrkPath := fs.String("wrk", "/usr/bin/wrk", "Debian wrk binary")
	reference := fs.String("reference", "", "orchbench binary whose `load` is the reference (e.g. built from the commit before a change); default: this build's goroutine engine")
	syscalls := fs.Bool("syscalls", false, "also count system calls and context switches per request, one run per contender under perf stat")
	procs := fs.Int("gen-procs", 0, "GOMAXPROCS of the generator (0: Go's default)")
	fs.StringVar(&engine, "engine", "", "engine of the generator: loop or goroutine (default: the generator's)")
	fs.StringVar(&orchbenchBin, "orchbench", "", "run this orchbench binary's `load` as the generator (default: the copy linked into bench-loadgen)")
	fs.Parse(args)
	if _, err := os.Stat(*wrkPath); err != nil {
		return fmt.Errorf("wrk not found at %s (apt-get install -y wrk, or just tools apt): %w", *wrkPath, err)
	}
	if err := resolveBinaries(&orchbenchBin, reference); err != nil {
		return err
	}
	hello, err := startServer(0)
	if err != nil {
		return err
	}
	defer hello.stop()

	openDur := time.Duration(float64(*requests) / *rate * float64(time.Second))
	closed := genSpec{URL: hello.url, Threads: *threads, Connections: *conns, Duration: *closedDur, Procs: *procs}
	open := closed
	open.Rate, open.Duration = *rate, openDur
	refName, refBin, refEngine := "reference (goroutine engine)", orchbenchBin, loadgen.EngineGoroutine
	if *reference != "" {
		refName, refBin, refEngine = "reference ("+filepath.Base(*reference)+")", *reference, ""
	}
	gen := func(bin, eng string, spec genSpec) func([]string) (int64, usage, error) {
		spec.Engine = eng
		return func(wrap []string) (int64, usage, error) {
			res, use, err := runGenWith(bin, spec, wrap)
			if err != nil {
				return 0, usage{}, err
			}
			n := res.Requests
			if res.Warmup != nil {
				n += res.Warmup.Requests
			}
			return n, use, nil
		}
	}
	contenders := []contender{
		{"wrk, closed loop", func(wrap []string) (int64, usage, error) {
			res, use, err := runWrkWrapped(*wrkPath, *threads, *conns, *closedDur, hello.url, wrap)
			if err != nil {
				return 0, usage{}, err
			}
			return res.Requests, use, nil
		}},
		{"orchbench, closed loop", gen(orchbenchBin, engine, closed)},
		{refName + ", closed loop", gen(refBin, refEngine, closed)},
		{fmt.Sprintf("orchbench, open loop -R%.0f", *rate), gen(orchbenchBin, engine, open)},
		{fmt.Sprintf("%s, open loop -R%.0f", refName, *rate), gen(refBin, refEngine, open)},
	}

	log := func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	samples := make([][]cpuSample, len(contenders))
	for round := 1; round <= *rounds; round++ {
		for i, c := range contenders {
			before, err := procCPU(hello.cmd.Process.Pid)
			if err != nil {
				return err
			}
			began := time.Now()
			n, use, err := c.run(nil)
			took := time.Since(began)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			after, err := procCPU(hello.cmd.Process.Pid)
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%s: no request completed", c.name)
			}
			s := cpuSample{perReq: float64(use.cpu) / float64(n), serverReq: float64(after-before) / float64(n), rate: float64(n) / took.Seconds()}
			samples[i] = append(samples[i], s)
			log("round %d: %-48s %8d requests, %6.2f µs CPU/request (server %.2f)", round, c.name, n, s.perReq/1000, s.serverReq/1000)
		}
	}

	fmt.Printf("\nCPU per request (-t%d -c%d, generator %s, closed loop %s per run, open loop %d requests at %.0f req/s, %d rounds, %s)\n\n",
		*threads, *conns, generatorName(), *closedDur, *requests, *rate, *rounds, time.Now().Format(time.RFC3339))
	fmt.Printf("%-56s %22s %14s %12s\n", "contender", "µs CPU/request", "server µs/req", "req/s")
	for i, c := range contenders {
		per, ser, rt := column(samples[i], func(s cpuSample) float64 { return s.perReq / 1000 }),
			column(samples[i], func(s cpuSample) float64 { return s.serverReq / 1000 }),
			column(samples[i], func(s cpuSample) float64 { return s.rate })
		fmt.Printf("%-56s %22s %14.2f %12.0f\n", c.name, spread(per, 2), middle(ser), middle(rt))
	}
	ratio := func(a, b int) string {
		r := make([]float64, len(samples[a]))
		for k := range r {
			r[k] = samples[a][k].perReq / samples[b][k].perReq
		}
		return spread(r, 3)
	}
	fmt.Println()
	fmt.Printf("%-56s %22s\n", "ratio, per round (median, min–max)", "")
	fmt.Printf("%-56s %22s\n", "orchbench closed loop / wrk", ratio(1, 0))
	fmt.Printf("%-56s %22s\n", "orchbench closed loop / "+refName, ratio(1, 2))
	fmt.Printf("%-56s %22s\n", "orchbench open loop / "+refName, ratio(3, 4))
	fmt.Printf("%-56s %22s\n", "orchbench open loop / wrk closed loop (indicative)", ratio(3, 0))

	if *syscalls {
		return countSyscalls(contenders)
	}
	return nil
}

// countSyscalls runs every contender once under perf stat and prints its
// system calls and context switches per request.
func countSyscalls(contenders []contender) error {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return fmt.Errorf("-syscalls needs perf (linux-perf): %w", err)
	}
	dir, err := os.MkdirTemp("", "bench-loadgen-perf")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Printf("\n%-56s %12s %14s\n", "one run under perf stat", "syscalls/req", "switches/req")
	for i, c := range contenders {
		out := filepath.Join(dir, strconv.Itoa(i))
		n, _, err := c.run([]string{perf, "stat", "-x,", "-o", out, "-e", "raw_syscalls:sys_enter,context-switches", "--"})
		if err != nil {
			return fmt.Errorf("%s under perf: %w", c.name, err)
		}
		counts, err := perfCounts(out)
		if err != nil {
			return err
		}
		fmt.Printf("%-56s %12.2f %14.3f\n", c.name, float64(counts["raw_syscalls:sys_enter"])/float64(n), float64(counts["context-switches"])/float64(n))
	}
	return nil
}

// perfCounts reads perf stat's CSV output (-x,): value, unit, event name.
func perfCounts(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue // a comment, or "<not counted>"
		}
		counts[f[2]] = v
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("perf stat wrote no counts to %s: %s", path, b)
	}
	return counts, nil
}

// procCPU is a process's user + system time so far, all threads, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// the command name (field 2) may hold spaces; the fields after it
	// start past its closing parenthesis
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, rest)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// column picks one figure from every sample.
func column(ss []cpuSample, f func(cpuSample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// spread is "median (min–max)" of xs.
func spread(xs []float64, digits int) string {
	med := middle(append([]float64(nil), xs...))
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%.*f (%.*f–%.*f)", digits, med, digits, lo, digits, hi)
}

func generatorName() string {
	if orchbenchBin != "" {
		return orchbenchBin + " load"
	}
	return "linked-in loadgen"
}

// runGenWith runs one generator child: this binary's hidden mode when bin
// is empty, else bin's `load`, under wrap when given.
func runGenWith(bin string, spec genSpec, wrap []string) (*loadgen.Result, usage, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, usage{}, err
	}
	arg, _ := json.Marshal(spec)
	argv := []string{self, genMode, string(arg)}
	if bin != "" {
		argv = append([]string{bin}, loadArgs(spec)...)
	}
	argv = append(append([]string(nil), wrap...), argv...)
	ctx, cancel := context.WithTimeout(context.Background(), spec.Duration+spec.Warmup+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, usage{}, fmt.Errorf("generator: %v: %s", err, errb.String())
	}
	var res loadgen.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, usage{}, fmt.Errorf("generator output: %w", err)
	}
	return &res, rusageOf(cmd.ProcessState), nil
}

// resolveBinaries turns each non-empty binary name into an absolute path,
// as the rounds run it from their own working directories.
func resolveBinaries(bins ...*string) error {
	for _, bin := range bins {
		if *bin == "" {
			continue
		}
		abs, err := exec.LookPath(*bin)
		if err != nil {
			return fmt.Errorf("%s: %w", *bin, err)
		}
		if *bin, err = filepath.Abs(abs); err != nil {
			return err
		}
	}
	return nil
}
