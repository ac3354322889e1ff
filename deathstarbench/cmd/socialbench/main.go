// Command socialbench says where a social network request's CPU goes, on
// one machine without a cluster: it starts Redis, memcached, FerretDB (on
// SQLite, or on a PostgreSQL it starts too) and every socialnet service in
// one process on loopback, loads the dataset through the API, drives each
// workload closed-loop for a fixed number of requests with `orchbench
// load`, and prints per workload the achieved rate and each process's
// user+system CPU per request (from /proc), as the median of the runs with
// their spread. The load generator's own CPU is not counted.
//
//	go run ./deathstarbench/cmd/socialbench --orchbench .tools/bin/orchbench \
//	  --ferretdb .tools/bin/ferretdb --socialnet .tools/bin/socialnet
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "socialbench:", err)
		os.Exit(1)
	}
}

type options struct {
	bin         binaries
	orchbench   string
	backend     string
	workloads   []string
	requests    map[string]int
	connections int
	runs        int
	warmup      bool
	users       int
	keep        bool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("socialbench", flag.ContinueOnError)
	fs.StringVar(&o.bin.ferretdb, "ferretdb", ".tools/bin/ferretdb", "the project's ferretdb binary (go build ./deathstarbench/cmd/ferretdb)")
	fs.StringVar(&o.bin.socialnet, "socialnet", ".tools/bin/socialnet", "the socialnet binary (go build ./deathstarbench/cmd/socialnet)")
	fs.StringVar(&o.orchbench, "orchbench", ".tools/bin/orchbench", "the orchbench binary, whose load command drives the workloads")
	fs.StringVar(&o.bin.redis, "redis-server", "redis-server", "redis-server")
	fs.StringVar(&o.bin.memcached, "memcached", "memcached", "memcached")
	fs.StringVar(&o.bin.postgresDir, "postgres-bin", "", "directory of PostgreSQL's initdb and postgres, for --backend postgresql")
	fs.StringVar(&o.backend, "backend", "sqlite", "FerretDB's backend: sqlite or postgresql")
	workloads := fs.String("workloads", "read-home-timeline:6000,read-user-timeline:3000,compose-post:600,mixed:6000", "WORKLOAD:REQUESTS per measured run, in order")
	fs.IntVar(&o.connections, "connections", 16, "closed-loop connections")
	fs.IntVar(&o.runs, "runs", 3, "runs per workload; the table shows their median and range")
	fs.BoolVar(&o.warmup, "warmup", true, "run each workload once unmeasured first: memcached holds a post only once a read has missed it, as in DeathStarBench, so the first reads after the load go to FerretDB")
	fs.IntVar(&o.users, "users", dataset.Reed98Users, "dataset users (posts: 10 per user on average)")
	fs.BoolVar(&o.keep, "keep", false, "keep the working directory (logs, data) instead of removing it")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.requests = map[string]int{}
	for _, item := range strings.Split(*workloads, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(item), ":")
		n, err := strconv.Atoi(count)
		if !ok || err != nil || n < 1 {
			return o, fmt.Errorf("--workloads item %q: want WORKLOAD:REQUESTS", item)
		}
		o.workloads = append(o.workloads, name)
		o.requests[name] = n
	}
	if o.runs < 1 || o.connections < 1 {
		return o, errors.New("--runs and --connections must be at least 1")
	}
	return o, nil
}

func run(args []string, out io.Writer) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "socialbench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(out, "working directory:", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	st, err := startStack(startCtx, dir, o.bin, o.backend)
	cancel()
	if err != nil {
		return err
	}
	defer st.stop()

	graph, err := dataset.Generate(o.users, dataset.EdgesFor(o.users), dataset.DefaultSeed)
	if err != nil {
		return err
	}
	before, err := st.cpu()
	if err != nil {
		return err
	}
	began := time.Now()
	loaded, err := dataset.Load(ctx, dataset.LoadOptions{Frontend: st.frontend, Graph: graph, PostsPerUser: 10, Concurrency: 32, Seed: dataset.DefaultSeed})
	if err == nil && loaded.Failed() > 0 {
		err = fmt.Errorf("%d requests failed", loaded.Failed())
	}
	if err != nil {
		return fmt.Errorf("loading the dataset: %w", err)
	}
	after, err := st.cpu()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "backend %s: loaded %d users, %d follows, %d posts in %s; CPU seconds %s\n",
		o.backend, loaded.Register.OK, loaded.Follow.OK, loaded.Compose.OK, time.Since(began).Round(time.Second), formatSeconds(before, after))

	var results []workloadResult
	for _, w := range o.workloads {
		r := workloadResult{name: w, requests: o.requests[w]}
		if o.warmup {
			m, err := measure(ctx, st, o, w)
			if err != nil {
				return fmt.Errorf("%s warm-up: %w", w, err)
			}
			fmt.Fprintf(out, "  %s (warm-up): %.0f rps, %s\n", w, m.rps, formatPerRequest(m.cpuPerRequest, st))
		}
		for range o.runs {
			m, err := measure(ctx, st, o, w)
			if err != nil {
				return fmt.Errorf("%s: %w", w, err)
			}
			r.runs = append(r.runs, m)
			fmt.Fprintf(out, "  %s: %.0f rps, %s\n", w, m.rps, formatPerRequest(m.cpuPerRequest, st))
		}
		results = append(results, r)
	}
	printTable(out, results, st)
	return nil
}

// measurement is one run of a workload.
type measurement struct {
	rps           float64
	cpuPerRequest map[string]float64 // ms by process
}

type workloadResult struct {
	name     string
	requests int
	runs     []measurement
}

var (
	rateLine   = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	failedLine = regexp.MustCompile(`completed \+ (\d+) errors .* \+ (\d+) timeouts`)
)

// measure runs requests of workload w and reads the processes' CPU around it.
func measure(ctx context.Context, st *stack, o options, w string) (measurement, error) {
	n := o.requests[w]
	before, err := st.cpu()
	if err != nil {
		return measurement{}, err
	}
	cmd := exec.CommandContext(ctx, o.orchbench, "load", "--closed", "-c", strconv.Itoa(o.connections),
		"--requests", strconv.Itoa(n), "-d", "10m", "--timeout", "30s",
		"-w", fmt.Sprintf("social-network:%s@%d", w, o.users), st.frontend+"/")
	text, err := cmd.CombinedOutput()
	if err != nil {
		return measurement{}, fmt.Errorf("orchbench load: %w\n%s", err, text)
	}
	after, err := st.cpu()
	if err != nil {
		return measurement{}, err
	}
	rate := rateLine.FindSubmatch(text)
	if rate == nil {
		return measurement{}, fmt.Errorf("no Requests/sec in orchbench load's report:\n%s", text)
	}
	if failed := failedLine.FindSubmatch(text); failed == nil || string(failed[1]) != "0" || string(failed[2]) != "0" {
		return measurement{}, fmt.Errorf("requests failed or timed out; the report:\n%s", text)
	}
	m := measurement{cpuPerRequest: map[string]float64{}}
	m.rps, _ = strconv.ParseFloat(string(rate[1]), 64)
	for name, seconds := range after {
		m.cpuPerRequest[name] = (seconds - before[name]) * 1000 / float64(n)
	}
	return m, nil
}

func formatSeconds(before, after map[string]float64) string {
	var parts []string
	for _, name := range sortedKeys(after) {
		parts = append(parts, fmt.Sprintf("%s %.1f", name, after[name]-before[name]))
	}
	return strings.Join(parts, ", ")
}

func formatPerRequest(ms map[string]float64, st *stack) string {
	var parts []string
	for _, p := range st.procs {
		parts = append(parts, fmt.Sprintf("%s %.2f ms", p.name, ms[p.name]))
	}
	return strings.Join(parts, ", ")
}

// printTable prints per workload the median rate and, per process, the
// median CPU per request with the runs' range.
func printTable(out io.Writer, results []workloadResult, st *stack) {
	fmt.Fprintf(out, "\n%-20s %8s %6s", "workload", "requests", "rps")
	for _, p := range st.procs {
		fmt.Fprintf(out, " %20s", p.name+" ms/req")
	}
	fmt.Fprintln(out)
	for _, r := range results {
		rates := make([]float64, len(r.runs))
		for i, m := range r.runs {
			rates[i] = m.rps
		}
		fmt.Fprintf(out, "%-20s %8d %6.0f", r.name, r.requests, median(rates))
		for _, p := range st.procs {
			values := make([]float64, len(r.runs))
			for i, m := range r.runs {
				values[i] = m.cpuPerRequest[p.name]
			}
			fmt.Fprintf(out, " %20s", fmt.Sprintf("%.2f (%.2f-%.2f)", median(values), slices.Min(values), slices.Max(values)))
		}
		fmt.Fprintln(out)
	}
}

func median(values []float64) float64 {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[mid]
	}
	return (sorted[mid-1] + sorted[mid]) / 2
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
