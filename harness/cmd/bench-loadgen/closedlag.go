package main

// `bench-loadgen closed-lag` measures how far a starved closed-loop
// generator's reported latency strays, which sets the harness's
// latency-distortion bound on the generator's lag (sweep's
// MaxClosedLoopLatencyLagShare). A child server with one worker holding
// each request a fixed time is saturated by the users, so its latency is
// its queue: the quantity a closed-loop step at a saturated service
// reports. The hold is a sleep, not CPU work, so the server's capacity
// stays put on a machine whose other jobs take its CPU. The generator
// child runs at GOMAXPROCS=1 beside a goroutine that is busy a given share
// of every period, so it gets to its users late by a controlled amount;
// the server, in its own process, times every request itself. For each
// share the figures are the generator's lag share and lag p99, its
// reported latency, the server's own latency over the same window, the
// reported mean against the declared users' queue at the achieved rate
// (Little's law), and the reported p99 against the unstarved runs'. Every
// run is bounded and on 127.0.0.1.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

const (
	closedLagMode  = "closed-lag"
	queueServeMode = "__queue-serve"
	starvedGenMode = "__starved-gen"
	// queueStatsPath answers the server's own latency percentiles over a
	// window given as ?from=&to= (Unix ns).
	queueStatsPath = "/__queue-stats"
)

// closedLagModes runs the closed-lag bench or one of its children and
// reports whether args named one.
func closedLagModes(args []string) bool {
	switch args[0] {
	case closedLagMode:
		if err := closedLag(args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench-loadgen closed-lag:", err)
			os.Exit(1)
		}
	case queueServeMode:
		queueServe(args[1:])
	case starvedGenMode:
		starvedGen(args[1:])
	default:
		return false
	}
	return true
}

// queueServe is the saturated child server: one worker, a fixed hold per
// request, every request's own latency (from its handler's start,
// queue included, to its answer) kept with its start.
func queueServe(args []string) {
	fs := flag.NewFlagSet(queueServeMode, flag.ExitOnError)
	work := fs.Duration("work", time.Millisecond, "hold per request, one at a time")
	fs.Parse(args)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	type served struct{ start, took int64 }
	var worker, mu sync.Mutex
	var log []served
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == queueStatsPath {
			from, _ := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64)
			to, _ := strconv.ParseInt(r.URL.Query().Get("to"), 10, 64)
			var in []time.Duration
			mu.Lock()
			for _, s := range log {
				if s.start >= from && s.start < to {
					in = append(in, time.Duration(s.took))
				}
			}
			mu.Unlock()
			json.NewEncoder(w).Encode(summarize(in))
			return
		}
		began := time.Now()
		worker.Lock()
		ts := syscall.NsecToTimespec(work.Nanoseconds())
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
		worker.Unlock()
		mu.Lock()
		if len(log) < maxServiceSamples {
			log = append(log, served{began.UnixNano(), int64(time.Since(began))})
		}
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	io.Copy(io.Discard, os.Stdin)
}

// latencies are the percentiles the bench compares.
type latencies struct {
	Count          int
	Mean, P50, P99 time.Duration
}

func summarize(ds []time.Duration) latencies {
	if len(ds) == 0 {
		return latencies{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return latencies{Count: len(ds), Mean: sum / time.Duration(len(ds)), P50: at(0.50), P99: at(0.99)}
}

// starvedSpec is what the parent hands a starved generator child.
type starvedSpec struct {
	URL      string        `json:"url"`
	Users    int           `json:"users"`
	Duration time.Duration `json:"duration"`
	Warmup   time.Duration `json:"warmup"`
	// Busy is the share of every Period a goroutine beside the generator
	// spins on its only P.
	Busy   float64       `json:"busy"`
	Period time.Duration `json:"period"`
}

func starvedGen(args []string) {
	var spec starvedSpec
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &spec) != nil {
		fmt.Fprintln(os.Stderr, "usage: bench-loadgen "+starvedGenMode+" JSON")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	stop := make(chan struct{})
	if spec.Busy > 0 {
		busy := time.Duration(spec.Busy * float64(spec.Period))
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for t := time.Now(); time.Since(t) < busy; {
				}
				if rest := spec.Period - busy; rest > 0 {
					time.Sleep(rest)
				}
			}
		}()
	}
	cfg := loadgen.Config{URL: spec.URL, Threads: 1, Connections: spec.Users, Duration: spec.Duration, Warmup: spec.Warmup,
		Closed: &loadgen.Closed{}}
	res, err := loadgen.Run(context.Background(), cfg)
	close(stop)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

// lagRun is one starved run's figures.
type lagRun struct {
	busy                 float64
	lagShare             float64
	lagP99               time.Duration
	reported, server     latencies
	rps, generatorCores  float64
	reportedP99VsServer  float64 // reported p99 / server p99 - 1
	reportedP99VsDeclare float64 // reported p99 / unstarved reported p99 - 1
	// meanVsQueue is the reported mean against the declared users' queue
	// at the achieved rate (users ÷ rps, Little's law), less one: what
	// the users the generator held back took out of the latency.
	meanVsQueue float64
}

func closedLag(args []string) error {
	fs := flag.NewFlagSet(closedLagMode, flag.ExitOnError)
	users := fs.Int("users", 16, "closed-loop users (connections)")
	work := fs.Duration("work", time.Millisecond, "the server's hold per request")
	dur := fs.Duration("duration", 4*time.Second, "measured length of each run (after a 1 s warm-up)")
	repeat := fs.Int("repeat", 3, "runs per busy share")
	period := fs.Duration("period", 2*time.Millisecond, "cycle of the busy goroutine (busy for its share, asleep for the rest)")
	shares := fs.String("busy", "0,0.5,0.8,0.9,0.95", "busy shares of the goroutine beside the generator")
	fs.Parse(args)
	var busies []float64
	for _, f := range strings.Split(*shares, ",") {
		b, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || b < 0 || b >= 1 {
			return fmt.Errorf("busy share %q: want 0 <= share < 1", f)
		}
		busies = append(busies, b)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	srv, err := startChildServer(self, queueServeMode, "-work", work.String())
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("closed loop, %d users, one-worker server holding each request %s, generator at GOMAXPROCS=1 beside a goroutine busy a share of every %s\n", *users, *work, *period)
	fmt.Printf("rep/srv: reported p99 against the server's own; mean/N/X: reported mean against the %d users' queue at the achieved rate (Little);\n", *users)
	fmt.Printf("p99/decl: reported p99 against the unstarved runs' median\n")
	fmt.Printf("%5s %8s %9s %9s %9s %9s %9s %7s %8s %9s %9s %6s\n", "busy", "lagshare", "lag p99", "rep mean", "rep p99", "srv p99", "lag/p99", "rps", "rep/srv", "mean/N/X", "p99/decl", "cores")
	var runs []lagRun
	var declared []time.Duration
	for _, b := range busies {
		for range *repeat {
			r, err := starvedRun(self, starvedSpec{URL: srv.url, Users: *users, Duration: *dur, Warmup: time.Second, Busy: b, Period: *period})
			if err != nil {
				return err
			}
			if b == 0 {
				declared = append(declared, r.reported.P99)
			}
			runs = append(runs, r)
		}
	}
	ref := medianDuration(declared)
	for i := range runs {
		r := &runs[i]
		if ref > 0 {
			r.reportedP99VsDeclare = float64(r.reported.P99)/float64(ref) - 1
		}
		fmt.Printf("%5.2f %7.1f%% %9s %9s %9s %9s %8.1f%% %7.0f %+7.1f%% %+8.1f%% %+8.1f%% %6.2f\n", r.busy, 100*r.lagShare, r.lagP99.Round(10*time.Microsecond),
			r.reported.Mean.Round(10*time.Microsecond), r.reported.P99.Round(10*time.Microsecond), r.server.P99.Round(10*time.Microsecond),
			100*float64(r.lagP99)/float64(max(r.reported.P99, 1)), r.rps, 100*r.reportedP99VsServer, 100*r.meanVsQueue,
			100*r.reportedP99VsDeclare, r.generatorCores)
	}
	fmt.Printf("unstarved reported p99 (the declared %d users' latency): %s\n", *users, ref)
	return nil
}

func starvedRun(self string, spec starvedSpec) (lagRun, error) {
	arg, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(context.Background(), spec.Duration+spec.Warmup+time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, self, starvedGenMode, string(arg)).Output()
	if err != nil {
		return lagRun{}, fmt.Errorf("starved generator: %w", err)
	}
	var res loadgen.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return lagRun{}, fmt.Errorf("starved generator output: %w", err)
	}
	resp, err := http.Get(fmt.Sprintf("%s%s?from=%d&to=%d", strings.TrimSuffix(spec.URL, "/"), queueStatsPath, res.Start.UnixNano(), res.End.UnixNano()))
	if err != nil {
		return lagRun{}, err
	}
	defer resp.Body.Close()
	var srvLat latencies
	if err := json.NewDecoder(resp.Body).Decode(&srvLat); err != nil {
		return lagRun{}, fmt.Errorf("server stats: %w", err)
	}
	us := func(v float64) time.Duration { return time.Duration(v * float64(time.Microsecond)) }
	r := lagRun{busy: spec.Busy, server: srvLat, rps: res.AchievedRate, generatorCores: res.Generator.CPUCores,
		lagP99: time.Duration(res.Generator.LagP99Us) * time.Microsecond}
	r.reported = latencies{Count: int(res.UncorrectedLatency.Count), Mean: us(res.UncorrectedLatency.Mean),
		P50: p(res.UncorrectedLatency, 50), P99: p(res.UncorrectedLatency, 99)}
	lag := us(res.Generator.LagMeanUs)
	if cycle := lag + r.reported.Mean; cycle > 0 {
		r.lagShare = float64(lag) / float64(cycle)
	}
	if srvLat.P99 > 0 {
		r.reportedP99VsServer = float64(r.reported.P99)/float64(srvLat.P99) - 1
	}
	if r.rps > 0 {
		queue := float64(spec.Users) / r.rps * float64(time.Second)
		r.meanVsQueue = float64(r.reported.Mean)/queue - 1
	}
	return r, nil
}

func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// startChildServer starts this binary in a server mode and reads the port
// it prints; the child serves until its stdin closes.
func startChildServer(self, mode string, args ...string) (*server, error) {
	cmd := exec.Command(self, append([]string{mode}, args...)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var port int
	if _, err := fmt.Fscanln(stdout, &port); err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s: %w", mode, err)
	}
	return &server{cmd: cmd, stdin: stdin, url: fmt.Sprintf("http://127.0.0.1:%d/", port)}, nil
}
