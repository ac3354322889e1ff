// Package sweep runs experiment plans: for every step it deploys (or reuses)
// the app variant, verifies it through gates, drives load, and stores the
// result in the archive before anything else, then in VictoriaMetrics.
package sweep

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/vmpush"
)

// Runner executes a sweep's plan on one cluster.
type Runner struct {
	// Orchestrators are the connected adapters by name; each step runs on
	// the one it names, and sees it only through the orchestrator contract.
	Orchestrators map[string]orchestrator.Orchestrator
	// Parse turns a rendered pack into jobs: Nomad's own parser, whatever
	// the orchestrator, so every adapter starts from the same job.
	Parse func(*pack.Rendered) ([]*api.Job, error)
	// Markers keeps the setup markers of steps on orchestrators that keep
	// none of their own (orchestrator.SetupMarkers); nil keeps none there,
	// and setup runs again in every process.
	Markers  orchestrator.SetupMarkers
	PacksDir string
	Archive  results.Archive
	// VMURL is where results are pushed; empty skips pushing (the archive
	// can be pushed later with `orchbench results push`).
	VMURL string
	// Load, when set, runs every step's generator instead of the step's
	// orchestrator's own one-shot job (LocalRunner: a child process here).
	Load orchestrator.LoadRunner
	Out  io.Writer
	// Keep leaves the deployments running after the sweep.
	Keep bool
	// HealthTimeout bounds how long a deployment may take to become healthy.
	HealthTimeout time.Duration
	// SettleBound bounds the wait, before each load, for the application to
	// finish the work the step before left (DefaultSettleBound when 0).
	SettleBound time.Duration
	// Orchbench is the binary setup hooks run (default: this process's own).
	Orchbench string
	// Agent is the node's log and metrics shipper; its cost is recorded in
	// every step and it is stopped for steps with shipping = "off". Nil
	// when the cluster runs none: steps then record only stray agents.
	Agent ShippingAgent
	// LogsURL is the VictoriaLogs the agent ships to, for the steps' log links.
	LogsURL string
	// Nodes reads the kernel of the node a task runs on (its CPU, what
	// accepts its connections, the agents beside it); nil reads every node
	// from this machine.
	Nodes nodeprobe.Resolver
	// away are the nodes the running step's own fault took away
	away awayNodes
	// Registry, when set, is where the nodes pull the project's images
	// from: every orchbench/* image the jobs name is rewritten to it.
	Registry imageref.Registry
	// Cluster acts on the cluster's machines for the node-level faults and
	// tells its shape; nil is the embedded single node, which refuses them.
	Cluster nodes.Controller

	// agentPaused is true while this sweep holds the agent stopped.
	agentPaused bool

	deployments map[string]*deployment
	// capacity and facts are read once per orchestrator.
	capacity map[string]orchestrator.Capacity
	// jobIDs caches the job IDs each configuration renders to
	jobIDs map[string][]string
	facts  map[string]orchestrator.Facts
	// lowest are the bodies the responses gate holds higher levels to.
	lowest lowestLevels
	// setupSpent is the time setup hooks took, kept out of the ETA.
	setupSpent time.Duration
	// lostWithNode are the instances node faults took down: their end is
	// reported late, when the node's agent is back
	// (gates.TaskEvidence.LostEarlier).
	lostWithNode map[string]bool
}

// Summary is what a finished sweep says about itself.
type Summary struct {
	Steps, Valid, Broken, Invalid, Skipped, Resumed int
	// Rerun counts invalid steps of an earlier run measured again.
	Rerun int
	// OtherShape counts steps left unrun for a control plane of the other
	// size (their app's ha): `sweep --resume` on that shape runs them.
	OtherShape   int
	PushFailures int
}

// Run executes every step of rec.Plan not already settled in the archive:
// never run, interrupted, or invalid (what ran then was not what was
// declared, so it is measured again; the earlier attempt is kept).
func (r *Runner) Run(ctx context.Context, rec *results.SweepRecord) (Summary, error) {
	var sum Summary
	if r.HealthTimeout == 0 {
		r.HealthTimeout = 5 * time.Minute
	}
	for _, st := range rec.Plan {
		if r.Orchestrators[st.Orchestrator] == nil {
			return sum, fmt.Errorf("step %s runs on %s, which this run has not connected (connected: %s)", st.ID, st.Orchestrator, strings.Join(r.orchestratorNames(), ", "))
		}
	}
	r.deployments = map[string]*deployment{}
	r.capacity = map[string]orchestrator.Capacity{}
	r.jobIDs = map[string][]string{}
	r.lostWithNode = map[string]bool{}
	r.facts = map[string]orchestrator.Facts{}
	r.lowest = lowestLevels{}
	archived, err := r.Archive.CompletedSteps(rec.ID)
	if err != nil {
		return sum, err
	}
	early := results.NewEarlyStop(rec.Spec.SLO)
	done := map[string]bool{}
	for _, st := range rec.Plan {
		if !archived[st.ID] {
			continue
		}
		prev, err := r.Archive.LoadStep(rec.ID, st.ID)
		if err != nil {
			return sum, fmt.Errorf("archived step %s: %w", st.ID, err)
		}
		if !prev.Settled() {
			sum.Rerun++
			continue
		}
		done[st.ID] = true
		early.Record(*prev)
		r.lowest.record(st, *prev)
		sum.Resumed++
	}
	if sum.Resumed > 0 || sum.Rerun > 0 {
		fmt.Fprintf(r.Out, "resuming sweep %s: %d of %d steps settled in the archive; %d invalid ones run again (earlier attempts kept)\n",
			rec.ID, sum.Resumed, len(rec.Plan), sum.Rerun)
	}
	otherShape, err := r.deferOtherShape(ctx, rec, done)
	if err != nil {
		return sum, err
	}
	sum.OtherShape = len(otherShape)
	// steps left for the other shape are passed over like settled ones, and
	// keep no deployment running for them
	for id := range otherShape {
		done[id] = true
	}
	defer r.stopAll()
	// the agent runs again whatever way the sweep ends
	defer func() {
		if r.agentPaused {
			if err := r.resumeAgent(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(r.Out, "warning: %v; run it again with: just cluster-up\n", err)
			}
		}
	}()

	started := time.Now()
	ran := 0
	vmDown := false
	remaining := len(rec.Plan) - sum.Resumed - sum.OtherShape
	for i, st := range rec.Plan {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if done[st.ID] {
			continue
		}
		// every step has a time, measured or not, so its series land in VictoriaMetrics
		sr := results.StepResult{Labels: results.LabelsFor(rec.ID, st), Metadata: map[string]any{}, Start: time.Now().UTC()}
		var raw map[string][]byte
		if skip, why := early.Skip(st); rec.Spec.EarlyStop && skip {
			// counted as broken at its level: its repetition already broke below
			sr.Gates = []results.Gate{{Name: gates.EarlyStop, Detail: "skipped: " + why}}
			sr.Skipped, sr.Outcome, sr.Reasons = true, results.OutcomeBroken, []string{"skipped: " + why}
			sum.Skipped++
		} else {
			raw = r.step(ctx, rec, st, &sr)
			if ctx.Err() != nil {
				// an interrupted step is not a result: leave it for --resume
				return sum, ctx.Err()
			}
		}
		if sr.End.IsZero() {
			sr.End = time.Now().UTC()
		}
		if err := r.Archive.WriteStep(rec.ID, sr, raw); err != nil {
			return sum, fmt.Errorf("archive step %s: %w", st.ID, err)
		}
		early.Record(sr)
		r.lowest.record(st, sr)
		if d := r.deployments[st.Configuration()]; d != nil && sr.Outcome == results.OutcomeBroken && !sr.Skipped {
			d.brokeAt = st.ID
		}
		sum.Steps++
		switch {
		case sr.Skipped:
		case sr.Outcome == results.OutcomeValid:
			sum.Valid++
		case sr.Outcome == results.OutcomeBroken:
			sum.Broken++
		default:
			sum.Invalid++
		}
		pushNote := ""
		switch {
		case r.VMURL == "":
		case vmDown:
			// one failed push already cost its retries; the rest wait for `results push`
			sum.PushFailures++
			pushNote = " · not pushed"
		default:
			if _, err := (vmpush.Pusher{URL: r.VMURL}).PushStep(ctx, sr); err != nil {
				sum.PushFailures++
				vmDown = true
				pushNote = " · not pushed (VictoriaMetrics: " + err.Error() + "); later steps are archived only"
			}
		}
		ran++
		remaining--
		// Setup hooks (dataset loads) run once per fresh deployment and can
		// take longer than all steps together, so they are left out of the
		// per-step pace; the ETA does not foresee deployments still to come.
		eta := time.Duration(float64(time.Since(started)-r.setupSpent) / float64(ran) * float64(remaining))
		fmt.Fprintf(r.Out, "[%d/%d] %s: %s · ETA %s%s\n", i+1, len(rec.Plan), st.ID, stepLine(sr), eta.Round(time.Second), pushNote)
		r.stopFinished(ctx, st.Configuration(), rec.Plan[i+1:], done)
		if sr.Measured() && st.Cooldown > 0 {
			select {
			case <-ctx.Done():
				return sum, ctx.Err()
			case <-time.After(st.Cooldown):
			}
		}
	}
	return sum, nil
}

func stepLine(sr results.StepResult) string {
	switch {
	case sr.Skipped:
		return strings.Join(sr.Reasons, "; ")
	case sr.Outcome == results.OutcomeInvalid:
		return sr.OutcomeText() + "; `sweep --resume` runs it again"
	}
	line := fmt.Sprintf("achieved %.1f/%.1f rps due, p50 %.2f ms, p99 %.2f ms, errors %d", sr.AchievedRPS, sr.DueRPS, sr.Corrected.P50, sr.Corrected.P99, sr.Errors)
	if sr.DueRPS <= 0 && sr.OfferedRPS <= 0 {
		line = fmt.Sprintf("achieved %.1f rps (closed loop), p50 %.2f ms, p99 %.2f ms, errors %d", sr.AchievedRPS, sr.Corrected.P50, sr.Corrected.P99, sr.Errors)
	}
	line += perCoreLine(sr)
	if hot, ok := sr.Metadata["hottest_task"].(string); ok {
		line += "; hottest: " + hot
	}
	if _, fault := results.EventsOf(sr); fault != nil {
		if fault.Node != nil && fault.Error == "" {
			line += "; " + fault.NodeRecovery()
		} else {
			line += fmt.Sprintf("; %s on %s: %s", fault.Kind, fault.Service, fault.Recovery())
		}
	}
	return sr.OutcomeText() + ": " + line
}

// healthGate judges a deployment that came up, or the error that kept it from it.
func healthGate(dep *deployment, err error) results.Gate {
	if err != nil {
		return gates.HealthyGate("", nil, err)
	}
	return gates.HealthyGate(dep.orch.Name(), dep.jobs, nil)
}

func (r *Runner) orchestratorNames() []string {
	var names []string
	for n := range r.Orchestrators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// loadSeed is the generator's seed for a step: the sweep's seed and the
// step's app, variant, level and repetition, but not its orchestrator or
// its place in the plan, so the same step on two orchestrators sends the
// same requests (the same users, the same posts) and their answers compare.
func loadSeed(sweepSeed uint64, st experiment.Step) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%s|%g|%d|%d", sweepSeed, st.App, st.Variant, st.OfferedRPS, st.Users, st.Rep)
	return max(h.Sum64(), 1) // 0 would mean "from the clock"
}

// loadArgs turns a step's load settings into `orchbench load` flags.
func loadArgs(rec *results.SweepRecord, st experiment.Step, eps []orchestrator.Endpoint) []string {
	l := st.Load
	args := []string{"-t", strconv.Itoa(max(l.Threads, 1))}
	if len(l.Phases) == 0 {
		args = append(args, "-d", st.Duration.String())
	}
	args = append(args, "--warmup", st.Warmup.String(), "-L", "-U", "--seed", strconv.FormatUint(loadSeed(rec.Seed, st), 10))
	switch {
	case l.Kind == experiment.LoadIterations:
		args = append(args, iterationArgs(st)...)
	case st.Users > 0:
		args = append(args, "--closed", "-c", strconv.Itoa(st.Users), "--think", l.Think.String())
		if l.SpawnRate > 0 {
			args = append(args, "--spawn-rate", strconv.FormatFloat(l.SpawnRate, 'g', -1, 64))
		}
	case len(l.Phases) > 0:
		// the phases replace -d and -R: their length is the step's duration
		args = append(args, "-c", strconv.Itoa(max(l.Connections, 1)), "--phases", experiment.PhasesText(l.Phases, st.OfferedRPS))
		if l.Distribution != "" {
			args = append(args, "-D", l.Distribution)
		}
	default:
		args = append(args, "-c", strconv.Itoa(max(l.Connections, 1)), "-R", experiment.FormatRate(st.OfferedRPS))
		if l.Distribution != "" {
			args = append(args, "-D", l.Distribution)
		}
	}
	if l.Engine != "" {
		args = append(args, "--engine", l.Engine)
	}
	if st.Autoscale != nil {
		// a new connection per request reaches the instances added since
		// the load began (experiment/autoscale.go)
		args = append(args, "--connection-close")
	}
	if l.Timeout > 0 {
		args = append(args, "--timeout", l.Timeout.String())
	}
	if l.Script != "" {
		args = append(args, "-s", l.Script)
	}
	if l.Workload != "" {
		args = append(args, "--workload", l.Workload)
	}
	// the generator refuses non-loopback targets unless told: the deployment's
	// own registered instances are exactly the ones it may load; the ones
	// reached only through an entry are not aimed at
	eps = orchestrator.LoadTargets(eps)
	allowed := map[string]bool{}
	for _, ep := range eps {
		if ip := net.ParseIP(ep.Address); (ip == nil || !ip.IsLoopback()) && !allowed[ep.Address] {
			allowed[ep.Address] = true
			args = append(args, "--allow-host", ep.Address)
		}
	}
	if len(eps) > 1 {
		var hosts []string
		for _, ep := range eps {
			hosts = append(hosts, ep.HostPort())
		}
		args = append(args, "--hosts", strings.Join(hosts, ","))
	}
	return args
}
