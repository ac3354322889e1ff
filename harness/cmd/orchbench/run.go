package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// runFlags describe one step: which variant of which pack, and its load.
type runFlags struct {
	sweepFlags
	variant, duration, warmup, dist, path, workload, script, think, orch string
	vars                                                                 []string
	rate                                                                 float64
	users, threads, connections                                          int
	stop                                                                 bool
}

func init() {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PACK --variant V (--rate R | --users N)",
		Short: "One step: deploy (or reuse) a pack variant, verify it, load it, archive and push the result",
		Long: `run is a sweep of one step. The variant is deployed through the adapter of
--orchestrator (an identical running version is reused), verified by the
gates (every instance healthy, enforced limits equal to the declaration, the
pack's correctness probe, load straight to a registered instance), loaded by
the orchestrator's own load-generator job, archived under results/ and pushed to VictoriaMetrics. The
deployment is left running for the next run unless --stop is given.`,
		Example: `  orchbench run taewa --variant vertical --var resource_scale=0.25 --rate 200 -d 20s
  orchbench run taewa --variant baseline --var resource_scale=0.25 --users 8 -d 10s --load-runner local`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runStep(cmd, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.variant, "variant", "baseline", "pack variant")
	fl.StringVar(&f.orch, "orchestrator", "nomad", "where to deploy and load: "+strings.Join(orchestrator.Names(), ", "))
	fl.StringArrayVar(&f.vars, "var", nil, "pack variable `name=value` (repeatable)")
	fl.Float64VarP(&f.rate, "rate", "R", 0, "open loop: offered requests/s")
	fl.IntVar(&f.users, "users", 0, "closed loop: number of users (instead of --rate)")
	fl.StringVar(&f.think, "think", "0s", "closed loop: think time between a reply and the next request")
	fl.IntVarP(&f.threads, "threads", "t", 2, "load-generator threads")
	fl.IntVarP(&f.connections, "connections", "c", 16, "connections (open loop)")
	fl.StringVarP(&f.duration, "duration", "d", "30s", "measured duration")
	fl.StringVar(&f.warmup, "warmup", "5s", "warm-up before measuring, recorded apart")
	fl.StringVarP(&f.dist, "dist", "D", "exp", "inter-arrival distribution: fixed or exp")
	fl.StringVar(&f.path, "path", "", "request path (default: the pack's orchbench_load_path)")
	fl.StringVarP(&f.workload, "workload", "w", "", "named Go workload instead of a single path")
	fl.StringVarP(&f.script, "script", "s", "", "wrk Lua script")
	fl.BoolVar(&f.stop, "stop", false, "stop the deployment afterwards")
	f.registerExecution(fl)
	rootCmd.AddCommand(cmd)
}

func runStep(cmd *cobra.Command, f runFlags, packName string) error {
	valid, err := experiment.PackVariants("packs")(packName)
	if err != nil {
		return err
	}
	if !slices.Contains(valid, f.variant) {
		return fmt.Errorf("--variant %q: pack %s has the variants %s", f.variant, packName, strings.Join(valid, ", "))
	}
	if (f.rate > 0) == (f.users > 0) {
		return fmt.Errorf("give exactly one of --rate (open loop) or --users (closed loop)")
	}
	if err := f.checkNodeProbeFlags(); err != nil {
		return err
	}
	if f.dist != "fixed" && f.dist != "exp" {
		return fmt.Errorf("--dist %q: valid are fixed, exp", f.dist)
	}
	durations := map[string]*time.Duration{}
	var duration, warmup, think time.Duration
	durations["--duration"], durations["--warmup"], durations["--think"] = &duration, &warmup, &think
	for flag, text := range map[string]string{"--duration": f.duration, "--warmup": f.warmup, "--think": f.think} {
		d, err := loadgen.ParseDuration(text)
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		*durations[flag] = d
	}
	vars := map[string]any{"variant": f.variant}
	for _, kv := range f.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--var %q: expected name=value", kv)
		}
		vars[k] = v
	}
	script := f.script
	if script != "" {
		if script, err = filepath.Abs(script); err != nil {
			return err
		}
	}
	load := experiment.Load{Kind: experiment.LoadOpen, Threads: f.threads, Connections: f.connections, Distribution: f.dist,
		Path: f.path, Workload: f.workload, Script: script, Think: think}
	var users []int
	var rates []float64
	if f.users > 0 {
		load.Kind = experiment.LoadClosed
		users = []int{f.users}
	} else {
		rates = []float64{f.rate}
	}
	if !orchestrator.Registered(f.orch) {
		return fmt.Errorf("--orchestrator %q: valid are %s", f.orch, strings.Join(orchestrator.Names(), ", "))
	}
	start := time.Now().UTC()
	spec := &experiment.Sweep{
		Name: "run-" + packName, Description: "orchbench run " + strings.Join(cmd.Flags().Args(), " "),
		Seed: uint64(start.UnixNano()), Repetitions: 1, Deploy: experiment.DeployPerConfiguration,
		Warmup: warmup, Duration: duration, Orchestrators: []string{f.orch},
		Apps: []experiment.App{{Name: packName, Pack: packName, Variants: []string{f.variant}, Vars: vars, Rates: rates, Users: users, Load: load}},
		SLO:  experiment.SLO{MinAchievedRatio: 0.95, MaxErrorRatio: 0.01},
	}
	rec := &results.SweepRecord{
		ID: results.NewSweepID(spec.Name, start), Spec: spec, Seed: spec.Seed, Plan: experiment.Plan(spec),
		GitSHA: gitSHA(), ToolVersions: toolVersions(), Start: start,
	}
	if err := (results.Archive{Dir: f.dir}).CreateSweep(*rec); err != nil {
		return err
	}
	f.keep = !f.stop
	return executeSweep(cmd, f.sweepFlags, rec)
}
