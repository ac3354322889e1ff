package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// step deploys if needed, verifies, loads, and fills sr, ending with its
// outcome decided; it returns the raw files to archive beside the summary.
// A gate that fails before the load stops the step there: what would be
// measured is not what was declared.
func (r *Runner) step(ctx context.Context, rec *results.SweepRecord, st experiment.Step, sr *results.StepResult) map[string][]byte {
	files := map[string][]byte{}
	defer sr.Decide()
	r.away.reset()
	gate := func(g results.Gate) bool {
		sr.Gates = append(sr.Gates, g)
		return g.Passed || g.NotChecked
	}
	if g, ok := r.applyShipping(ctx, st); !ok {
		gate(g)
		return files
	}
	dep, err := r.deploy(ctx, st, sr)
	if !gate(healthGate(dep, err)) {
		return files
	}
	app, o := dep.app, dep.orch
	r.recordDeployment(ctx, sr, o, app)
	prepared := r.prepare(ctx, dep, sr)
	if !prepared.Passed && dep.dataset.remake && ctx.Err() == nil {
		// Data that comes with the deployment (snapshot images) and fails
		// its verification (a node fault took a store and its writes) is
		// restored by deploying anew, as at a configuration's first step.
		fmt.Fprintf(r.Out, "%s: %s; its data comes with the deployment, which is made again\n", st.ID, prepared.Detail)
		sr.Metadata["remade_after"] = prepared.Detail
		dep.ready = false
		if dep, err = r.deploy(ctx, st, sr); !gate(healthGate(dep, err)) {
			return files
		}
		app, o = dep.app, dep.orch
		r.recordDeployment(ctx, sr, o, app)
		prepared = r.prepare(ctx, dep, sr)
	}
	if !gate(prepared) {
		return files
	}
	if dep.brokeAt != "" && ctx.Err() == nil {
		// A step that broke can leave its failure behind in a reused
		// deployment: requests still queued at a single worker after their
		// clients gave up, a spent pool. The next step starts from rest or
		// on a fresh deployment, never measuring the last one's debris.
		if g := probeDeployment(ctx, st, dep).gate; !g.Passed {
			why := fmt.Sprintf("its probe fails after step %s broke (%s)", dep.brokeAt, g.Detail)
			fmt.Fprintf(r.Out, "%s: %s; the deployment is made again\n", st.ID, why)
			sr.Metadata["remade_after"] = why
			dep.ready = false
			if dep, err = r.deploy(ctx, st, sr); !gate(healthGate(dep, err)) {
				return files
			}
			app, o = dep.app, dep.orch
			r.recordDeployment(ctx, sr, o, app)
			if !gate(r.prepare(ctx, dep, sr)) {
				return files
			}
		}
		dep.brokeAt = ""
	}
	var lims []orchestrator.Limits
	for _, d := range dep.jobs {
		l, err := o.Limits(ctx, d)
		if err != nil {
			gate(results.Gate{Name: gates.Limits, Detail: err.Error()})
			return files
		}
		lims = append(lims, l...)
	}
	sr.Metadata["limits"] = lims
	if !gate(gates.LimitsGate(lims)) {
		return files
	}
	// Before the probe, whose latency sizes the load's connections.
	if !gate(r.settle(ctx, lims)) {
		return files
	}
	probed := probeDeployment(ctx, st, dep)
	eps := probed.eps
	if eps != nil {
		sr.Metadata["endpoints"] = eps
	}
	if !gate(probed.gate) {
		return files
	}

	path := st.Load.Path
	if path == "" {
		path = app.App.LoadPath
	}
	sr.Metadata["entry"] = eps[0].Entry
	if st.Load.Kind == experiment.LoadIterations {
		dir, err := os.MkdirTemp("", "orchbench-iterations")
		if err == nil {
			defer os.RemoveAll(dir)
			st.Load, err = writeIterationScript(dir, st.Load)
		}
		if err != nil {
			gate(results.Gate{Name: gates.Load, Detail: "iterations script: " + err.Error()})
			return files
		}
	}
	url := "http://" + eps[0].HostPort() + path
	toolReq, err := toolRequest(st, url)
	if err != nil {
		gate(results.Gate{Name: gates.Load, Detail: err.Error()})
		return files
	}
	req := orchestrator.LoadRequest{StepID: st.ID, URL: url, NetNS: eps[0].NetNS, Args: loadArgs(rec, st, eps),
		Bound: st.Warmup + st.Duration + 2*time.Minute, GeneratorCores: st.Load.GeneratorCores, Tool: toolReq}
	if req.GeneratorCores > 0 {
		capacity, err := r.capacityOf(ctx, o)
		if req.MHzPerCore = capacity.MHzPerCore; err != nil {
			gate(results.Gate{Name: gates.Load, Detail: fmt.Sprintf("generator_cores = %g: %v", req.GeneratorCores, err)})
			return files
		}
	}
	tool := st.Load.RunnerName()
	if tool != experiment.RunnerOrchbench && !gate(gates.ToolEntryGate(tool, eps)) {
		return files
	}
	load, err := r.loadRunner(o, st.Load)
	if err != nil {
		gate(results.Gate{Name: gates.Load, Detail: err.Error()})
		return files
	}
	sr.Metadata["load_runner"] = load.Name()
	sr.Metadata["load_tool"] = tool
	sr.Metadata["load_command"] = req.CommandLine()
	if tool != experiment.RunnerOrchbench {
		sr.Metadata["load_command"] = toolCommand(tool, req.Tool)
	}
	if st.Users == 0 && tool == experiment.RunnerArtillery {
		gate(gates.ConnectionPerArrivalLittleGate(tool))
	} else if st.Users == 0 {
		// the connections must carry the phases' peak, not their mean
		little := gates.LittleCheckOf(max(st.Load.Connections, 1), st.PeakRPS(), probed.seen.Slowest)
		sr.Metadata["little"] = little
		if !gate(gates.LittleGate(little)) {
			return files
		}
	} else {
		gate(gates.ClosedLittleGate(st.Users))
	}
	var autoscaled orchestrator.Autoscaled
	if st.Autoscale != nil {
		var g results.Gate
		if autoscaled, g = scalingStep(o, app, st); !g.Passed {
			gate(g)
			return files
		}
		sr.Metadata["connection_per_request"] = true
	}
	var fault <-chan results.FaultRecord
	if st.Fault != nil {
		req.Started = make(chan struct{})
		fault = r.injectLater(ctx, o, app, st, req.Started)
	}
	sampler := startCPUSampler(lims, time.Second, r.Nodes)
	shipping := r.watchShipping(ctx, st, dep, lims)
	var tasks gates.TaskEvidence
	tasks.Before, tasks.BeforeErr = takeFingerprint(ctx, dep)
	var watch *scaleWatch
	if autoscaled != nil {
		watch = startScaleWatch(ctx, autoscaled, app, *app.App.Autoscale)
		tasks.ScaledGroup = app.App.Autoscale.Group
	}
	loadBegan := time.Now()
	res, text, toolRun, runErr := runLoad(ctx, load, req)
	var scaling gates.ScalingEvidence
	if watch != nil {
		var start, end time.Time
		if res != nil {
			start, end = res.Start, res.End
		}
		scaling = watch.finish(ctx, autoscaled.Scaler(), st.Autoscale.Settle, experiment.StepUpAt(st.Load.Phases), start, end)
		if n := len(scaling.States); n > 0 && scaling.States[n-1].Version != 0 {
			// each scaling action is a new version of the same job
			app.Version = scaling.States[n-1].Version
		}
	}
	var taskCPU []results.TaskCPU
	if res != nil {
		if taskCPU = sampler.finish(res.Start, res.End); len(taskCPU) > 0 {
			sr.Metadata["task_cpu"] = taskCPU
			sr.Metadata["hottest_task"] = taskCPU[0].String()
		}
		shipped := shipping.finish(res.Start, res.End)
		sr.Metadata["shipping"] = shipped
		gate(gates.ShippingGate(shipped, shipping.err))
	} else {
		sampler.finish(time.Time{}, time.Time{})
		shipping.finish(time.Time{}, time.Time{})
	}
	var injected *results.FaultRecord
	if fault != nil {
		injected = r.faultGate(sr, gate, fault, res, faultWait(st))
	}
	gate(r.eventsGate(ctx, sr, dep, st.ID, tasks, loadBegan, res, injected))
	if injected != nil && injected.Kind.NodeLevel() {
		injected.Dataset = r.datasetAfterFault(ctx, dep)
	}
	if len(text) > 0 {
		files["raw.txt"] = text
	}
	// a partial result is kept in the archive too: nothing measured is lost
	if res != nil {
		if b, err := json.MarshalIndent(res, "", "  "); err == nil {
			files["loadgen.json"] = b
		}
		if res.Latency.Histogram != "" {
			files["histogram.hdr"] = []byte(res.Latency.Histogram + "\n")
		}
		measurement(sr, res)
		serviceCPU(sr, taskCPU, eps)
		if watch != nil {
			scaling.Series = sr.Series
			rec := gates.ScalingRecordOf(scaling, rec.Spec.SLO)
			sr.Scaling = &rec
			gate(gates.ScalingGate(scaling, rec))
		}
	}
	complete := gates.CompleteGate(res, runErr, st.Duration-toolSlack(tool), load.Name())
	if st.Load.Kind == experiment.LoadIterations {
		complete = gates.IterationsGate(res, runErr, st, load.Name())
	}
	if !gate(complete) {
		if tool != experiment.RunnerOrchbench && res != nil {
			// a tool that fell behind its own schedule (Artillery's phases
			// stretched) was most often short of CPU: the step says that too
			gate(toolGeneratorGate(sr, tool, toolRun, res, req.GeneratorCores, gates.ServiceUseOf(taskCPU, eps)))
		}
		return files
	}
	// a fault may have replaced an instance during the load: its new
	// address is as legitimate a peer as the old one
	if after, err := o.Endpoints(ctx, app, app.App.Service); err == nil {
		eps = append(eps, after...)
	}
	sr.Metadata["peers"] = res.Peers
	if tool != experiment.RunnerOrchbench && len(res.Peers) == 0 {
		gate(results.Gate{Name: gates.LoadPath, NotChecked: true, Detail: tool + " does not report the addresses its connections reached"})
	} else {
		gate(loadPathGate(ctx, res.Peers, eps, r.instanceCgroups(ctx, dep, lims), r.Nodes, &r.away))
	}
	sr.Metadata["generator"] = res.Generator
	if tool != experiment.RunnerOrchbench {
		gate(toolGeneratorGate(sr, tool, toolRun, res, req.GeneratorCores, gates.ServiceUseOf(taskCPU, eps)))
	} else if st.Load.Kind == experiment.LoadOpen {
		gate(gates.GeneratorGate(res, gates.GeneratorLagBound(st.Load.MaxGeneratorLag, rec.Spec.SLO)))
	} else {
		gate(gates.ClosedLoopGeneratorGate(res, st.Load.Think, gates.DefaultMaxClosedLoopLagShare, gates.ServiceUseOf(taskCPU, eps)))
	}
	gate(gates.ResponsesGate(probed.probe.Path, probeReference(st, app.App, probed.seen.Body), gates.BodyReferencesFor(r.lowest.below(st), res), res))
	if sr.Scaling != nil {
		gate(gates.ScalingSLOGate(*sr.Scaling, rec.Spec.SLO))
	} else {
		gate(gates.SLOGate(*sr, rec.Spec.SLO))
	}
	return files
}

// instanceCgroups are the CPU cgroups of the deployment's instances before
// the load and now: a fault may have replaced one during it.
func (r *Runner) instanceCgroups(ctx context.Context, dep *deployment, before []orchestrator.Limits) map[string]bool {
	out := map[string]bool{}
	for _, l := range before {
		out[l.CgroupPath] = true
	}
	for _, d := range dep.jobs {
		now, err := dep.orch.Limits(ctx, d)
		if err != nil {
			continue // an instance still restarting; the ones read before stand
		}
		for _, l := range now {
			out[l.CgroupPath] = true
		}
	}
	return out
}

// recordDeployment notes what was deployed, on what, and on which nodes.
func (r *Runner) recordDeployment(ctx context.Context, sr *results.StepResult, o orchestrator.Orchestrator, app *orchestrator.Deployment) {
	sr.Metadata["orchestrator"] = o.Name()
	sr.Metadata["job"] = app.Job
	sr.Metadata["job_version"] = app.Version
	sr.Metadata["deploy_seconds"] = app.DeployDuration.Seconds()
	if c, err := r.capacityOf(ctx, o); err == nil {
		sr.Metadata["mhz_per_core"] = c.MHzPerCore
		sr.Metadata["capacity"] = c
	}
	facts, ok := r.facts[o.Name()]
	if !ok {
		var err error
		if facts, err = r.factsOf(ctx, o); err != nil {
			fmt.Fprintf(r.Out, "  warning: facts of %s: %v\n", o.Name(), err)
		}
		r.facts[o.Name()] = facts
	}
	sr.Metadata["nodes"] = facts
	for k, v := range app.App.Meta {
		sr.Metadata[k] = v
	}
}

// faultGate waits for the injection to report and records it: a fault that
// was declared and not injected means the step did not run as declared.
func (r *Runner) faultGate(sr *results.StepResult, gate func(results.Gate) bool, fault <-chan results.FaultRecord, res *loadgen.Result, wait time.Duration) *results.FaultRecord {
	// the load has ended, so the injection has either happened or never will
	select {
	case f := <-fault:
		if res != nil && !f.At.IsZero() {
			f.Seconds = f.At.Sub(res.Start).Seconds()
		}
		if f.Kind.NodeLevel() {
			nodeFaultWindows(&f, res)
		}
		sr.Metadata["fault"] = &f
		var from, to time.Time
		if res != nil {
			from, to = res.Start, res.End
		}
		gate(gates.FaultGate(f, from, to))
		return &f
	case <-time.After(wait):
		gate(results.Gate{Name: gates.Fault, Detail: fmt.Sprintf("the fault was not injected, or its record not complete, %s after the load ended (after is longer than the run?)", wait)})
		return nil
	}
}

// eventsGate reads what happened to the deployment's tasks since the load
// began and the instances now, has them judged against the fingerprint
// taken before the load, and fills in the fault's recovery time.
func (r *Runner) eventsGate(ctx context.Context, sr *results.StepResult, dep *deployment, step string, tasks gates.TaskEvidence, since time.Time, res *loadgen.Result, fault *results.FaultRecord) results.Gate {
	tasks.Events, tasks.EventsErr = collectEvents(ctx, dep, since)
	tasks.After, tasks.AfterErr = takeFingerprint(ctx, dep)
	measuredFrom := since
	if res != nil && !res.Start.IsZero() {
		measuredFrom = res.Start
	}
	tasks.LostEarlier = r.lostWithNode
	v := gates.TaskEventsGate(step, tasks, measuredFrom, fault)
	if len(v.Events) > 0 {
		sr.Metadata["task_events"] = v.Events
	}
	if fault != nil && fault.Node != nil && fault.Error == "" && takesNodeAway(fault.Kind) {
		for _, h := range fault.OnNode {
			r.lostWithNode[h.Instance] = true
		}
	}
	if fault != nil && fault.RecoverySeconds == nil {
		fault.RecoverySeconds = v.Recovery
	}
	return v.Gate
}
