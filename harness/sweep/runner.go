// Package sweep runs experiment plans: for every step it deploys (or reuses)
// the app variant, verifies it through gates, drives load, and stores the
// result in the archive before anything else, then in VictoriaMetrics.
package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/results"
)

// Runner executes a sweep's plan on one cluster.
type Runner struct {
	Nomad    *nomad.Adapter
	PacksDir string
	Archive  results.Archive
	// VMURL is where results are pushed; empty skips pushing (the archive
	// can be pushed later with `orchbench results push`).
	VMURL string
	Load  LoadRunner
	Out   io.Writer
	// Keep leaves the deployments running after the sweep.
	Keep bool
	// HealthTimeout bounds how long a deployment may take to become healthy.
	HealthTimeout time.Duration
	// Orchbench is the binary setup hooks run (default: this process's own).
	Orchbench string

	deployments map[string]*deployment
	mhzPerCore  float64
	// setupSpent is the time setup hooks took, kept out of the ETA.
	setupSpent time.Duration
	nodes      map[string]map[string]string
}

// deployment is one configuration's deployed jobs and what was verified once.
type deployment struct {
	jobs []*orchestrator.Deployment
	app  *orchestrator.Deployment // the job with orchbench_service meta
}

// Summary is what a finished sweep says about itself.
type Summary struct {
	Steps, Valid, Invalid, Skipped, Resumed int
	PushFailures                            int
}

// Run executes every step of rec.Plan not already complete in the archive.
func (r *Runner) Run(ctx context.Context, rec *results.SweepRecord) (Summary, error) {
	var sum Summary
	if r.HealthTimeout == 0 {
		r.HealthTimeout = 5 * time.Minute
	}
	r.deployments = map[string]*deployment{}
	done, err := r.Archive.CompletedSteps(rec.ID)
	if err != nil {
		return sum, err
	}
	early := results.NewEarlyStop(rec.Spec.SLO)
	for _, st := range rec.Plan {
		if done[st.ID] {
			if prev, err := r.Archive.LoadStep(rec.ID, st.ID); err == nil {
				early.Record(*prev)
			}
			sum.Resumed++
		}
	}
	if sum.Resumed > 0 {
		fmt.Fprintf(r.Out, "resuming sweep %s: %d of %d steps already in the archive\n", rec.ID, sum.Resumed, len(rec.Plan))
	}
	defer r.stopAll()

	started := time.Now()
	ran := 0
	vmDown := false
	remaining := len(rec.Plan) - sum.Resumed
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
			sr.Gates = []results.Gate{{Name: GateEarly, Detail: "skipped: " + why}}
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
		sum.Steps++
		switch {
		case sr.Valid:
			sum.Valid++
		case len(sr.Gates) == 1 && sr.Gates[0].Name == GateEarly:
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
			if _, err := (results.Pusher{URL: r.VMURL}).PushStep(ctx, sr); err != nil {
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
		if sr.Valid && st.Cooldown > 0 {
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
	if failed := sr.FailedGates(); len(failed) > 0 {
		if len(sr.Gates) == 1 && sr.Gates[0].Name == GateEarly {
			return sr.Gates[0].Detail
		}
		return "INVALID (" + strings.Join(failed, "; ") + ")"
	}
	line := fmt.Sprintf("achieved %.1f/%.0f rps, p50 %.2f ms, p99 %.2f ms, errors %d", sr.AchievedRPS, sr.OfferedRPS, sr.Corrected.P50, sr.Corrected.P99, sr.Errors)
	if hot, ok := sr.Metadata["hottest_task"].(string); ok {
		line += "; hottest: " + hot
	}
	return line
}

// step deploys if needed, verifies, loads, and fills sr; it returns the raw
// files to archive beside the summary.
func (r *Runner) step(ctx context.Context, rec *results.SweepRecord, st experiment.Step, sr *results.StepResult) map[string][]byte {
	files := map[string][]byte{}
	gate := func(g results.Gate) bool {
		sr.Gates = append(sr.Gates, g)
		return g.Passed
	}
	dep, err := r.deploy(ctx, st, sr)
	if !gate(healthGate(dep, err)) {
		return files
	}
	app := dep.app
	sr.Metadata["job"] = app.Job
	sr.Metadata["job_version"] = app.Version
	sr.Metadata["deploy_seconds"] = app.DeployDuration.Seconds()
	sr.Metadata["mhz_per_core"] = r.mhzPerCore
	if r.nodes == nil {
		r.nodes, _ = r.Nomad.NodeAttributes(ctx)
	}
	sr.Metadata["nodes"] = r.nodes
	for k, v := range app.Meta {
		if strings.HasPrefix(k, "orchbench_") {
			sr.Metadata[k] = v
		}
	}
	var lims []orchestrator.Limits
	for _, d := range dep.jobs {
		l, err := r.Nomad.Limits(ctx, d)
		if err != nil {
			gate(results.Gate{Name: GateLimits, Detail: err.Error()})
			return files
		}
		lims = append(lims, l...)
	}
	sr.Metadata["limits"] = lims
	if !gate(LimitsGate(lims)) {
		return files
	}
	service := app.Meta["orchbench_service"]
	eps, err := r.Nomad.Endpoints(ctx, app, service)
	if err != nil {
		gate(results.Gate{Name: GateProbe, Detail: err.Error()})
		return files
	}
	sr.Metadata["endpoints"] = eps
	probe, err := probeFor(st, app.Meta)
	if err != nil {
		gate(results.Gate{Name: GateProbe, Detail: err.Error()})
		return files
	}
	probeGate, probeBytes := probe.check(ctx, eps)
	if !gate(probeGate) {
		return files
	}
	path := st.Load.Path
	if path == "" {
		path = app.Meta["orchbench_load_path"]
	}
	if path == "" {
		path = "/"
	}
	req := LoadRequest{StepID: st.ID, URL: "http://" + eps[0].HostPort() + path, Args: loadArgs(rec, st, eps), Bound: st.Warmup + st.Duration + 2*time.Minute}
	if !gate(LoadPathGate(eps[0].HostPort(), eps)) {
		return files
	}
	sr.Metadata["load_runner"] = r.Load.Name()
	sr.Metadata["load_command"] = req.CommandLine()
	var fault <-chan faultRecord
	if st.Fault != nil {
		req.Started = make(chan struct{})
		fault = r.injectLater(ctx, app, st, req.Started)
	}
	sampler := startCPUSampler(lims, time.Second)
	res, text, err := r.Load.Run(ctx, req)
	if res != nil {
		if cpu := sampler.finish(res.Start, res.End); len(cpu) > 0 {
			sr.Metadata["task_cpu"] = cpu
			sr.Metadata["hottest_task"] = cpu[0].String()
		}
	} else {
		sampler.finish(time.Time{}, time.Time{})
	}
	if fault != nil {
		// the load has ended, so the injection has either happened or never will
		select {
		case f := <-fault:
			if res != nil && !f.At.IsZero() {
				f.Seconds = f.At.Sub(res.Start).Seconds()
			}
			sr.Metadata["fault"] = f
			if f.Error != "" {
				gate(results.Gate{Name: GateFault, Detail: f.Error})
			} else {
				gate(results.Gate{Name: GateFault, Passed: true, Detail: fmt.Sprintf("%s on %s at %.1f s into the measurement", f.Kind, f.Service, f.Seconds)})
			}
		case <-time.After(5 * time.Second):
			gate(results.Gate{Name: GateFault, Detail: "the fault was not injected before the load ended (after is longer than the run?)"})
		}
	}
	if len(text) > 0 {
		files["raw.txt"] = text
	}
	if err != nil {
		gate(results.Gate{Name: GateLoad, Detail: err.Error()})
		return files
	}
	measurement(sr, res)
	gate(ResponsesGate(probe, probeBytes, res))
	gate(results.Gate{Name: GateLoad, Passed: true, Detail: fmt.Sprintf("%d requests in %.1f s by the %s load runner", res.Requests, res.DurationSeconds, r.Load.Name())})
	if b, err := json.MarshalIndent(res, "", "  "); err == nil {
		files["loadgen.json"] = b
	}
	if res.Latency.Histogram != "" {
		files["histogram.hdr"] = []byte(res.Latency.Histogram + "\n")
	}
	sr.Valid = true
	for _, g := range sr.Gates {
		sr.Valid = sr.Valid && g.Passed
	}
	return files
}

// faultRecord is what happened when a fault was injected during load.
type faultRecord struct {
	Kind    string    `json:"kind"`
	Service string    `json:"service"`
	At      time.Time `json:"at"`
	// Seconds is the injection time from the start of the measured period.
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// injectLater injects the step's fault once the load has run for warm-up
// plus Fault.After, and reports what it did.
func (r *Runner) injectLater(ctx context.Context, app *orchestrator.Deployment, st experiment.Step, started <-chan struct{}) <-chan faultRecord {
	out := make(chan faultRecord, 1)
	service := st.Fault.Service
	if service == "" {
		service = app.Meta["orchbench_service"]
	}
	go func() {
		rec := faultRecord{Kind: st.Fault.Kind, Service: service}
		select {
		case <-started:
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(st.Warmup + st.Fault.After):
		case <-ctx.Done():
			return
		}
		rec.At = time.Now().UTC()
		if err := r.Nomad.InjectFault(ctx, app, orchestrator.Fault{Kind: st.Fault.Kind, Service: service}); err != nil {
			rec.Error = err.Error()
		}
		out <- rec
	}()
	return out
}

func healthGate(dep *deployment, err error) results.Gate {
	if err != nil {
		return results.Gate{Name: GateHealthy, Detail: err.Error()}
	}
	var parts []string
	for _, d := range dep.jobs {
		parts = append(parts, fmt.Sprintf("%s v%d", d.Job, d.Version))
	}
	return results.Gate{Name: GateHealthy, Passed: true, Detail: "every instance running and passing in Consul: " + strings.Join(parts, ", ")}
}

// loadArgs turns a step's load settings into `orchbench load` flags.
func loadArgs(rec *results.SweepRecord, st experiment.Step, eps []orchestrator.Endpoint) []string {
	l := st.Load
	args := []string{"-t", strconv.Itoa(max(l.Threads, 1)), "-d", st.Duration.String(), "--warmup", st.Warmup.String(), "-L", "-U",
		"--seed", strconv.FormatUint(rec.Seed+uint64(st.Index)+1, 10)}
	if st.Users > 0 {
		args = append(args, "--closed", "-c", strconv.Itoa(st.Users), "--think", l.Think.String())
	} else {
		args = append(args, "-c", strconv.Itoa(max(l.Connections, 1)), "-R", experiment.FormatRate(st.OfferedRPS))
		if l.Distribution != "" {
			args = append(args, "-D", l.Distribution)
		}
	}
	if l.Script != "" {
		args = append(args, "-s", l.Script)
	}
	if l.Workload != "" {
		args = append(args, "--workload", l.Workload)
	}
	// the generator refuses non-loopback targets unless told: the deployment's
	// own registered instances are exactly the ones it may load
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

// deploy renders the step's pack variant and deploys it, unless this
// configuration is already deployed and the policy keeps it.
func (r *Runner) deploy(ctx context.Context, st experiment.Step, sr *results.StepResult) (*deployment, error) {
	key := st.Configuration()
	if d, ok := r.deployments[key]; ok && !st.Redeploy {
		// a reused deployment is verified again: an instance may have died,
		// or a fault of the previous step may still be healing
		for _, j := range d.jobs {
			if err := r.Nomad.WaitHealthy(ctx, j, r.HealthTimeout); err != nil {
				return nil, err
			}
		}
		sr.Metadata["deployment"] = "reused"
		return d, nil
	} else if ok {
		r.stop(d)
		delete(r.deployments, key)
	}
	jobs, err := r.render(ctx, st)
	if err != nil {
		return nil, err
	}
	dep := &deployment{}
	for _, job := range jobs {
		d, err := r.Nomad.Deploy(ctx, job)
		if err != nil {
			return nil, err
		}
		dep.jobs = append(dep.jobs, d)
		if d.Meta["orchbench_service"] != "" && dep.app == nil {
			dep.app = d
		}
	}
	if dep.app == nil {
		return nil, fmt.Errorf("pack %s declares no orchbench_service in any job's meta: the harness cannot tell which service to load", st.Pack)
	}
	for _, d := range dep.jobs {
		if err := r.Nomad.WaitHealthy(ctx, d, r.HealthTimeout); err != nil {
			return nil, err
		}
	}
	fresh := false
	for _, d := range dep.jobs {
		fresh = fresh || d.Fresh
	}
	sr.Metadata["deployment"] = map[bool]string{true: "fresh", false: "reused running version"}[fresh]
	if err := r.setup(ctx, dep, fresh); err != nil {
		return nil, err
	}
	r.deployments[key] = dep
	return dep, nil
}

// render renders the step's pack with its variables; mhz_per_core comes
// from the node so declared cores become the right CFS quota.
func (r *Runner) render(ctx context.Context, st experiment.Step) ([]*api.Job, error) {
	p, err := pack.Load(filepath.Join(r.PacksDir, st.Pack))
	if err != nil {
		return nil, err
	}
	overrides := map[string]string{}
	for k, v := range st.Vars {
		overrides[k] = varText(v)
	}
	if _, declared := p.Variables["mhz_per_core"]; declared {
		if _, set := overrides["mhz_per_core"]; !set {
			if r.mhzPerCore == 0 {
				if r.mhzPerCore, _, err = r.Nomad.NodeCPU(ctx); err != nil {
					return nil, err
				}
			}
			overrides["mhz_per_core"] = strconv.FormatFloat(r.mhzPerCore, 'f', -1, 64)
		}
	}
	rendered, err := p.Render(overrides, nil)
	if err != nil {
		return nil, err
	}
	var jobs []*api.Job
	for _, name := range rendered.JobFiles() {
		job, err := r.Nomad.ParseHCL(rendered.Files[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rendered.TemplatePath(name), err)
		}
		jobs = append(jobs, job)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("pack %s rendered no job", st.Pack)
	}
	return jobs, nil
}

// varText writes a spec value the way --var takes it (HCL accepts JSON lists and objects).
func varText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func (r *Runner) stop(d *deployment) {
	for _, j := range d.jobs {
		_ = r.Nomad.Stop(context.Background(), j)
	}
}

func (r *Runner) stopAll() {
	if r.Keep {
		return
	}
	keys := make([]string, 0, len(r.deployments))
	for k := range r.deployments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.stop(r.deployments[k])
	}
}
