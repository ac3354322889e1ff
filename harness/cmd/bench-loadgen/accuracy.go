package main

// `bench-loadgen accuracy` repeats the main benchmark's latency check in
// rounds, for the generator and a reference: a server that holds every
// request a fixed time (10 ms) at a fifth of its capacity, where the
// generator's reported p50 should be the server's true service time (the
// median its handler measured). Each run gets a fresh server, so the true
// service time is that run's own. The error is the generator's corrected
// p50 against it.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

const accuracyMode = "accuracy"

// accuracySample is one run against a fresh sleeping server.
type accuracySample struct {
	p50, uncorrected, service time.Duration
}

func (s accuracySample) err() float64 {
	return float64(s.p50-s.service) / float64(s.service)
}

func accuracyBench(args []string) error {
	fs := flag.NewFlagSet(accuracyMode, flag.ExitOnError)
	threads := fs.Int("t", 2, "generator threads")
	conns := fs.Int("c", 16, "connections")
	hold := fs.Duration("hold", 10*time.Millisecond, "the server's time per request")
	load := fs.Float64("load", 0.2, "offered share of the server's capacity (connections / hold)")
	dur := fs.Duration("d", 10*time.Second, "length of each run, after a 1 s warm-up")
	rounds := fs.Int("runs", 3, "rounds; each runs the generator and the reference once")
	reference := fs.String("reference", "", "orchbench binary whose `load` is the reference; default: this build's goroutine engine")
	procs := fs.Int("gen-procs", 0, "GOMAXPROCS of the generator (0: Go's default)")
	fs.StringVar(&engine, "engine", "", "engine of the generator: loop or goroutine (default: the generator's)")
	fs.StringVar(&orchbenchBin, "orchbench", "", "run this orchbench binary's `load` as the generator (default: the copy linked into bench-loadgen)")
	fs.Parse(args)
	if err := resolveBinaries(&orchbenchBin, reference); err != nil {
		return err
	}
	rate := *load * float64(*conns) / hold.Seconds()
	refName, refBin, refEngine := "reference (goroutine engine)", orchbenchBin, loadgen.EngineGoroutine
	if *reference != "" {
		refName, refBin, refEngine = "reference ("+filepath.Base(*reference)+")", *reference, ""
	}
	type gen struct {
		name, bin, engine string
	}
	gens := []gen{{"orchbench", orchbenchBin, engine}, {refName, refBin, refEngine}}
	samples := make([][]accuracySample, len(gens))
	for round := 1; round <= *rounds; round++ {
		for i, g := range gens {
			srv, err := startServer(*hold)
			if err != nil {
				return err
			}
			spec := genSpec{URL: srv.url, Threads: *threads, Connections: *conns, Rate: rate, Duration: *dur,
				Warmup: time.Second, Procs: *procs, Engine: g.engine}
			res, _, err := runGenWith(g.bin, spec, nil)
			var service time.Duration
			if err == nil {
				service, err = srv.serviceTime()
			}
			srv.stop()
			if err != nil {
				return fmt.Errorf("%s: %w", g.name, err)
			}
			s := accuracySample{p50: p(res.Latency, 50), uncorrected: p(res.UncorrectedLatency, 50), service: service}
			samples[i] = append(samples[i], s)
			fmt.Fprintf(os.Stderr, "round %d: %-40s p50 %s (uncorrected %s), true service time %s: %+.2f%%\n",
				round, g.name, s.p50, s.uncorrected, s.service.Round(time.Microsecond), 100*s.err())
		}
	}
	fmt.Printf("\nLatency accuracy (%s server at %.0f req/s, -t%d -c%d, %s runs after a 1 s warm-up, %d rounds, %s)\n\n",
		*hold, rate, *threads, *conns, *dur, *rounds, time.Now().Format(time.RFC3339))
	fmt.Printf("%-48s %26s %26s\n", "generator", "p50 error vs true service", "uncorrected p50 error")
	for i, g := range gens {
		errs := make([]float64, len(samples[i]))
		unc := make([]float64, len(samples[i]))
		for k, s := range samples[i] {
			errs[k] = 100 * s.err()
			unc[k] = 100 * float64(s.uncorrected-s.service) / float64(s.service)
		}
		fmt.Printf("%-48s %26s %26s\n", g.name, spread(errs, 2)+" %", spread(unc, 2)+" %")
	}
	return nil
}
