package sweep

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/toolload"
)

// loadRunner picks what runs a step's load: orchbench's generator (the
// orchestrator's job, or r.Load), or the study tool the spec names, run by
// the orchestrator's tool job or, with --load-runner local, here.
func (r *Runner) loadRunner(o orchestrator.Orchestrator, l experiment.Load) (orchestrator.LoadRunner, error) {
	name := l.RunnerName()
	if name == experiment.RunnerOrchbench {
		if r.Load != nil {
			return r.Load, nil
		}
		return o.LoadRunner(), nil
	}
	tool, err := toolload.Lookup(name)
	if err != nil {
		return nil, err
	}
	switch r.Load.(type) {
	case LocalRunner:
		return LocalToolRunner{Tool: tool}, nil
	case nil:
	default:
		return r.Load, nil // a caller's own runner runs every step
	}
	tr, ok := o.(orchestrator.ToolRunners)
	if !ok {
		return nil, fmt.Errorf("load runner %s: the %s adapter cannot run it as a job yet (nomad can; or use --load-runner local)", name, o.Name())
	}
	return tr.ToolLoadRunner(name)
}

// toolRequest is what a study tool is asked for a step; the error is a
// spec's locustfile that cannot be read.
func toolRequest(st experiment.Step, url string) (toolload.Request, error) {
	req := toolload.Request{URL: url, Connections: st.Users, Think: st.Load.Think, SpawnRate: st.Load.SpawnRate,
		Warmup: st.Warmup, Duration: st.Duration, Timeout: st.Load.Timeout}
	if st.Load.Locustfile != "" {
		b, err := os.ReadFile(st.Load.Locustfile)
		if err != nil {
			return req, fmt.Errorf("locustfile: %w", err)
		}
		req.Locustfile = string(b)
	}
	if it := st.Load.Iterations; st.Load.Kind == experiment.LoadIterations && it != nil {
		req.Iterations = &toolload.Iterations{Threads: st.Users, Loops: it.Loops}
		for _, r := range it.Requests {
			req.Iterations.Requests = append(req.Iterations.Requests, toolload.HTTPRequest{Method: r.Method, Path: r.Path, Body: r.Body, ContentType: r.ContentType})
		}
	}
	if st.Users == 0 && st.OfferedRPS > 0 {
		req.Rate, req.Phases = st.OfferedRPS, toolPhases(st)
	}
	return req, nil
}

// toolPhases are an open-loop step's arrivals at its rate: its phases, or
// one flat phase of its duration.
func toolPhases(st experiment.Step) []loadgen.Phase {
	if len(st.Load.Phases) == 0 {
		return []loadgen.Phase{{Dur: st.Duration, From: st.OfferedRPS, To: st.OfferedRPS}}
	}
	out := make([]loadgen.Phase, 0, len(st.Load.Phases))
	for _, p := range st.Load.Phases {
		out = append(out, loadgen.Phase{Dur: p.Duration, From: p.From * st.OfferedRPS, To: p.To * st.OfferedRPS})
	}
	return out
}

// toolCommand is the tool's command line, archived with the step.
func toolCommand(name string, req toolload.Request) string {
	tool, err := toolload.Lookup(name)
	if err != nil {
		return name
	}
	warm, run, err := tool.Command(req, ".", ".")
	if err != nil {
		return name + ": " + err.Error()
	}
	line := name + " " + strings.Join(run, " ")
	if warm != nil {
		line = name + " " + strings.Join(warm, " ") + " && " + line
	}
	return line
}

// toolSlack is how much shorter than planned a tool's measured window may
// be (its own start-up inside its run time); 0 for ours.
func toolSlack(name string) time.Duration {
	if t, err := toolload.Lookup(name); err == nil {
		return t.Slack()
	}
	return 0
}

// runLoad runs a step's load. A runner that watches its tool from outside
// also returns what it saw, with the tool's CPU over the measured window
// in the result's Generator figures, as orchbench's generator reports its own.
func runLoad(ctx context.Context, load orchestrator.LoadRunner, req orchestrator.LoadRequest) (*loadgen.Result, []byte, *orchestrator.ToolRun, error) {
	observed, ok := load.(orchestrator.ObservedRunner)
	if !ok {
		res, text, err := load.Run(ctx, req)
		return res, text, nil, err
	}
	res, text, run, err := observed.RunObserved(ctx, req)
	if res != nil {
		if cpu := toolCPUOf(&run, res); cpu.Unknown == "" {
			res.Generator.CPUCores = cpu.Cores
			res.Generator.CPUSeconds = cpu.Cores * res.DurationSeconds
		}
	}
	return res, text, &run, err
}

// LocalToolRunner runs a study tool as a child process here: the binary
// cluster/tools.sh installs in .tools/bin, else one on PATH.
type LocalToolRunner struct {
	Tool   toolload.Tool
	Binary string
}

func (l LocalToolRunner) Name() string { return "local/" + l.Tool.Name() }

func (l LocalToolRunner) binary() (string, error) {
	if l.Binary != "" {
		return l.Binary, nil
	}
	name := l.Tool.Name()
	if p, err := filepath.Abs(filepath.Join(".tools", "bin", name)); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("load runner %s: no %s in .tools/bin or on PATH (run cluster/tools.sh %s)", name, name, name)
	}
	return p, nil
}

func (l LocalToolRunner) Run(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, error) {
	res, raw, _, err := l.RunObserved(ctx, req)
	return res, raw, err
}

// RunObserved runs the tool and reports its measured run's process: its
// real start and end, and its CPU from its rusage. That is the mean over
// the process's whole life, start-up included, the only reading a child
// of ours gives without sampling /proc.
func (l LocalToolRunner) RunObserved(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, orchestrator.ToolRun, error) {
	var run orchestrator.ToolRun
	name := l.Tool.Name()
	bin, err := l.binary()
	if err != nil {
		return nil, nil, run, err
	}
	dir, err := os.MkdirTemp("", "orchbench-"+name)
	if err != nil {
		return nil, nil, run, err
	}
	defer os.RemoveAll(dir)
	files, err := l.Tool.Files(req.Tool)
	if err != nil {
		return nil, nil, run, err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			return nil, nil, run, err
		}
	}
	out := filepath.Join(dir, l.Tool.ResultFile())
	warm, args, err := l.Tool.Command(req.Tool, dir, dir)
	if err != nil {
		return nil, nil, run, err
	}
	ctx, cancel := context.WithTimeout(ctx, req.Bound)
	defer cancel()
	var raw bytes.Buffer
	req.MarkStarted()
	for i, a := range [][]string{warm, args} {
		if a == nil {
			continue
		}
		cmd := req.NetNS.Command(ctx, bin, a...)
		cmd.Stdout, cmd.Stderr = &raw, &raw
		started := time.Now()
		err := cmd.Run()
		ended := time.Now()
		if err != nil {
			return nil, raw.Bytes(), run, fmt.Errorf("load runner %s: %v: %s", name, err, orchestrator.LastLine(raw.String()))
		}
		if measured := i == 1; measured {
			run = processRun(started, ended, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, raw.Bytes(), run, fmt.Errorf("load runner %s left no result: %w", name, err)
	}
	raw.Write(orchestrator.ToolOutputMark(name))
	raw.Write(b)
	res, err := l.Tool.Parse(b)
	if res == nil {
		return nil, raw.Bytes(), run, fmt.Errorf("load runner %s: %w (%s begins %q)", name, err, l.Tool.ResultFile(), orchestrator.Head(b, 80))
	}
	if err == nil {
		err = run.Settle(res, req.Tool)
	}
	if err != nil {
		// kept for the archive; the step is invalid
		return res, raw.Bytes(), run, fmt.Errorf("load runner %s: %w", name, err)
	}
	return res, raw.Bytes(), run, nil
}

// processRun is a local tool process's run: its CPU from start to end, and
// the cap it ran under, the harness's own (its cgroup's, else its cores).
func processRun(started, ended time.Time, cpu time.Duration) orchestrator.ToolRun {
	run := orchestrator.ToolRun{Started: started, Ended: ended, CPUSource: "rusage of the tool's process",
		CPU: []limits.Usage{{At: started}, {At: ended, CPU: cpu}}, LimitCores: float64(runtime.NumCPU())}
	if e, err := limits.ForPID(os.Getpid()); err == nil && e.EffectiveCores() > 0 {
		run.LimitCores = e.EffectiveCores()
	}
	return run
}
