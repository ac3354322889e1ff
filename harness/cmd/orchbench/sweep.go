package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	clusternodes "github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/report"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/studies"
	"github.com/orchbench/orchbench/harness/sweep"
	"github.com/orchbench/orchbench/harness/vmpush"
)

type sweepFlags struct {
	file, resume, dir, reports, vm, logs, loadRunner, image, jobPrefix string
	runnerOverride                                                     string
	dryRun, keep                                                       bool
	// retryInvalid is how many more passes run the steps still invalid
	retryInvalid int
	// nodeProbes are NODE=ADDR pairs: where each node's probe answers
	nodeProbes []string
	// registry is where the nodes pull the project's images (host:port)
	registry string
}

func init() {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep -f experiments/<x>.hcl | --resume SWEEP",
		Short: "Run an experiment matrix: deploy, verify, load, archive, push, report",
		Long: `sweep expands an experiment spec into steps (app × orchestrator × variant ×
offered load × repetition, in a seeded random order) and runs them on the
cluster. Each step is verified (healthy in Consul, enforced limits equal to the
variant's, the app's correctness probe) before load, archived under
results/<sweep>/<step>/ first, then pushed to VictoriaMetrics. Interrupt it at
any time: --resume continues without repeating or losing a step.`,
		Example: `  orchbench sweep -f experiments/demo.hcl --dry-run
  orchbench sweep -f experiments/demo.hcl
  orchbench sweep --resume demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSweep(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "experiment spec (HCL)")
	fl.StringVar(&f.resume, "resume", "", "continue the archived sweep with this ID (or name: the newest)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and exit")
	fl.StringVar(&f.runnerOverride, "runner", "", "load runner for every app, replacing the spec's (one of "+strings.Join(experiment.Runners, ", ")+"); the sweep's name gains it")
	f.registerExecution(fl)
	fl.BoolVar(&f.keep, "keep", false, "leave the deployments running afterwards")
	fl.IntVar(&f.retryInvalid, "retry-invalid", 0, "run the steps that came out invalid again, up to `N` more passes (each attempt is archived; as `--resume` would, without the second command)")
	rootCmd.AddCommand(cmd)
}

// registerExecution adds the flags of where a sweep runs and stores, shared
// by sweep and run.
func (f *sweepFlags) registerExecution(fl *pflag.FlagSet) {
	fl.StringVar(&f.dir, "dir", "results", "results archive `directory`")
	fl.StringVar(&f.reports, "reports", "reports", "report output `directory`")
	fl.StringVar(&f.vm, "vm", vmpush.VMURL(), "VictoriaMetrics URL to push results to (empty: archive only)")
	logs := os.Getenv("ORCHBENCH_VL_URL")
	if logs == "" {
		logs = "http://127.0.0.1:9428"
	}
	fl.StringVar(&f.logs, "logs", logs, "VictoriaLogs URL the node agent ships task logs to (each step's report links to its logs there; default from $ORCHBENCH_VL_URL)")
	fl.StringVar(&f.loadRunner, "load-runner", "orchestrator", "where load runs: orchestrator (each step's orchestrator's own one-shot job: on Nomad the batch job jobs/loadgen.nomad.hcl) or local (child process here)")
	fl.StringVar(&f.image, "loadgen-image", orchestrator.DefaultLoadImage, "image of the load generator's one-shot job; a study tool's (runner = \"fortio\") is orchbench/<tool> with the same tag")
	fl.StringVar(&f.jobPrefix, "load-job-prefix", orchestrator.DefaultLoadJobPrefix, "start of the IDs of the jobs that run a study tool (runner = \"fortio\"); another prefix also renames the generator's job to <prefix>-loadgen")
	fl.StringVar(&f.registry, "registry", os.Getenv(imageref.Env), "`host:port` of the registry the nodes pull the project's images from (the emulated cluster's: <client>:5000): orchbench/* images in the jobs and the load image are named there (default $"+imageref.Env+")")
	fl.StringArrayVar(&f.nodeProbes, "node-probe", nil, "read the tasks of node NODE through its probe (orchbench node-probe) at `NODE=HOST:PORT` (repeatable); with any given, a node without one cannot be read; with none, the probes the orchestrators run (the node-probe job, service or DaemonSet) are found through them")
}

// checkNodeProbeFlags refuses a malformed --node-probe before anything runs.
func (f sweepFlags) checkNodeProbeFlags() error {
	if _, err := nodeprobe.ParseProbes(f.nodeProbes); err != nil {
		return fmt.Errorf("--node-probe: %w", err)
	}
	return nil
}

func runSweep(cmd *cobra.Command, f sweepFlags) error {
	out := cmd.OutOrStdout()
	// a bad flag must not leave an archived sweep behind
	if err := f.checkNodeProbeFlags(); err != nil {
		return err
	}
	if f.retryInvalid < 0 {
		return fmt.Errorf("--retry-invalid %d: the number of passes cannot be negative", f.retryInvalid)
	}
	archive := results.Archive{Dir: f.dir}
	var rec *results.SweepRecord
	switch {
	case f.resume != "" && f.file != "":
		return errors.New("give -f for a new sweep or --resume for an archived one, not both")
	case f.resume != "":
		id, err := archive.Resolve(f.resume)
		if err != nil {
			return err
		}
		if rec, err = archive.LoadSweep(id); err != nil {
			return err
		}
	case f.file != "":
		cluster, err := clusternodes.FromEnv()
		if err != nil {
			return err
		}
		_, single := cluster.(clusternodes.SingleNode)
		spec, err := experiment.ParseFile(f.file, experiment.Options{BaseDir: ".", Runner: f.runnerOverride, SingleNode: single})
		if err != nil {
			return err
		}
		plan := experiment.Plan(spec)
		if f.dryRun {
			return experiment.FormatPlan(out, spec, plan)
		}
		start := time.Now().UTC()
		rec = &results.SweepRecord{
			ID: results.NewSweepID(spec.Name, start), Spec: spec, Seed: spec.Seed, Plan: plan,
			GitSHA: gitSHA(), ToolVersions: toolVersions(), Start: start,
		}
		if err := archive.CreateSweep(*rec); err != nil {
			return err
		}
	default:
		return errors.New("give -f experiments/<x>.hcl or --resume SWEEP")
	}

	return executeSweep(cmd, f, rec)
}

// executeSweep runs an archived sweep record to the end and reports on it.
func executeSweep(cmd *cobra.Command, f sweepFlags, rec *results.SweepRecord) error {
	out := cmd.OutOrStdout()
	archive := results.Archive{Dir: f.dir}
	runner, err := f.runner(rec, out)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(out, "sweep %s: %d steps, about %s; archive %s\n", rec.ID, len(rec.Plan),
		experiment.EstimatedDuration(rec.Plan).Round(time.Second), filepath.Join(f.dir, rec.ID))
	sum, retried, err := runWithRetries(ctx, runner, rec, f.retryInvalid, out)
	if ctx.Err() != nil {
		fmt.Fprintf(out, "interrupted; every finished step is archived. Continue with: orchbench sweep --resume %s\n", rec.ID)
		return fmt.Errorf("sweep %s interrupted", rec.ID)
	}
	if err != nil {
		fmt.Fprintf(out, "sweep stopped: %v\nfinished steps are archived; continue with: orchbench sweep --resume %s\n", err, rec.ID)
		return err
	}
	fmt.Fprintf(out, "\nsweep %s: %d steps run (%d valid, %d broken, %d invalid, %d skipped above a breaking point: counted as broken), %d from an earlier run\n",
		rec.ID, sum.Steps, sum.Valid, sum.Broken, sum.Invalid, sum.Skipped, sum.Resumed)
	if retried > 0 {
		fmt.Fprintf(out, "%d of those runs measured again steps that had come out invalid (--retry-invalid); the invalid attempts stay archived\n", retried)
	}
	if sum.OtherShape > 0 {
		fmt.Fprintf(out, "%d steps need the other control-plane shape (their ha, above): bring it up and run orchbench sweep --resume %s\n", sum.OtherShape, rec.ID)
	}
	if sum.Invalid > 0 {
		fmt.Fprintf(out, "%d invalid steps did not measure what was declared; `orchbench sweep --resume %s` runs them again\n", sum.Invalid, rec.ID)
	}
	steps, err := archive.LoadSteps(rec.ID)
	if err != nil {
		return err
	}
	if err := results.FormatShow(out, rec, steps); err != nil {
		return err
	}
	if t := studies.Headline(rec, steps); t != nil {
		if err := t.WriteText(out); err != nil {
			return err
		}
	}
	index, err := report.Write(archive, rec.ID, f.reports)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(out, "\nreport:     %s\n", index)
	if f.vm != "" {
		fmt.Fprintf(out, "dashboards: %s/vmui/#/dashboards (sweep=%s)\n", strings.TrimRight(f.vm, "/"), rec.ID)
	}
	if sum.PushFailures > 0 {
		fmt.Fprintf(out, "%d steps were not pushed to VictoriaMetrics; push them with: orchbench results push %s\n", sum.PushFailures, rec.ID)
	}
	return nil
}

// sweepPass is one pass over a sweep's unsettled steps (sweep.Runner).
type sweepPass interface {
	Run(ctx context.Context, rec *results.SweepRecord) (sweep.Summary, error)
}

// runWithRetries runs the sweep, then up to retries more passes while
// steps are invalid: an invalid step did not measure what was declared
// (often a busy machine that made the generator late), so measuring it
// again is what the user would do by hand with --resume. The summary
// counts every attempt run; Invalid is what is left invalid at the end.
func runWithRetries(ctx context.Context, runner sweepPass, rec *results.SweepRecord, retries int, out io.Writer) (sum sweep.Summary, retried int, err error) {
	sum, err = runner.Run(ctx, rec)
	for pass := 1; err == nil && ctx.Err() == nil && sum.Invalid > 0 && pass <= retries; pass++ {
		fmt.Fprintf(out, "\n--retry-invalid: %d invalid steps run again (pass %d of %d; the invalid attempts stay archived)\n", sum.Invalid, pass, retries)
		retried += sum.Invalid
		var again sweep.Summary
		again, err = runner.Run(ctx, rec)
		sum.Steps += again.Steps
		sum.Valid += again.Valid
		sum.Broken += again.Broken
		sum.Skipped += again.Skipped
		sum.PushFailures += again.PushFailures
		sum.Invalid = again.Invalid
	}
	return sum, retried, err
}

// runner connects every orchestrator the plan runs on, and Nomad, whose
// parser turns rendered packs into jobs for all of them.
func (f sweepFlags) runner(rec *results.SweepRecord, out io.Writer) (*sweep.Runner, error) {
	parser, err := nomad.New("", "")
	if err != nil {
		return nil, err
	}
	registry, err := imageref.ParseRegistry(f.registry, "--registry")
	if err != nil {
		return nil, err
	}
	// the autoscalers read the cluster's VictoriaMetrics whether or not
	// results are pushed there (--vm "")
	cfg := orchestrator.Config{LoadImage: registry.Ref(f.image), LoadJobFile: filepath.Join("jobs", "loadgen.nomad.hcl"), LoadJobPrefix: f.jobPrefix,
		MetricsURL: vmpush.VMURL()}
	connect := func() (map[string]orchestrator.Orchestrator, error) {
		all := map[string]orchestrator.Orchestrator{}
		for _, st := range rec.Plan {
			if all[st.Orchestrator] != nil {
				continue
			}
			o, err := orchestrator.New(st.Orchestrator, cfg)
			if err != nil {
				return nil, err
			}
			all[st.Orchestrator] = o
		}
		return all, nil
	}
	// the probes are found through the orchestrators, which are then
	// connected again to read their nodes through them
	all, err := connect()
	if err != nil {
		return nil, err
	}
	finders := map[string]orchestrator.ProbeFinder{"nomad": parser}
	for name, o := range all {
		if pf, ok := o.(orchestrator.ProbeFinder); ok {
			finders[name] = pf
		}
	}
	discover, cancelDiscover := context.WithTimeout(context.Background(), discoverTimeout)
	defer cancelDiscover()
	clients, found, err := f.probeClients(discover, finders, out)
	if err != nil {
		return nil, err
	}
	var nodes nodeprobe.Resolver
	if found {
		checkProbes(discover, clients, out)
		nodes = nodeprobe.FromClients(clients)
		cfg.Nodes = nodes
		if all, err = connect(); err != nil {
			return nil, err
		}
	}
	// the cluster's Consul keeps the setup markers of every orchestrator's
	// steps, as it does Nomad's own
	runner := &sweep.Runner{Orchestrators: all, Parse: parser.ParseJobs, Markers: parser,
		PacksDir: "packs", Archive: results.Archive{Dir: f.dir}, VMURL: f.vm, Out: out, Keep: f.keep, Nodes: nodes, Registry: registry}
	// the machines node faults act on: NODES_NAME's emulated cluster, or the
	// single node, which refuses them
	if runner.Cluster, err = clusternodes.FromEnv(); err != nil {
		return nil, err
	}
	// the node agent serves every orchestrator's steps: they share the node
	agent := &nomad.NodeAgent{Client: parser.Client, Nodes: nodes}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if deployed, err := agent.Deployed(ctx); err == nil && deployed {
		runner.Agent = agent
		runner.LogsURL = f.logs
	} else if err != nil {
		fmt.Fprintf(out, "warning: no node agent: %v (steps that declare shipping will be invalid)\n", err)
	}
	switch f.loadRunner {
	case "local":
		runner.Load = sweep.LocalRunner{}
	case "orchestrator", "nomad":
		// "nomad" is the name this choice had while Nomad was the only orchestrator
	default:
		return nil, fmt.Errorf("--load-runner %q: valid are orchestrator, local", f.loadRunner)
	}
	return runner, nil
}

func gitSHA() string {
	b, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=12").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// toolVersions records what produced the numbers, for the archive.
func toolVersions() map[string]string {
	v := map[string]string{"go": runtime.Version(), "orchbench": gitSHA()}
	for name, args := range map[string][]string{
		"nomad":  {"nomad", "version"},
		"consul": {"consul", "version"},
		"docker": {"docker", "version", "--format", "{{.Server.Version}}"},
	} {
		if b, err := exec.Command(args[0], args[1:]...).Output(); err == nil {
			v[name] = strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)[0]
		}
	}
	return v
}
