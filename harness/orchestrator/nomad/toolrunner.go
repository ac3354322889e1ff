package nomad

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/toolload"
)

// ToolRunner runs a study's own load tool as a batch job of
// jobs/loadtool.nomad.hcl, registered afresh for every step (a tool's
// arguments cannot come from dispatch meta without a shell in its image),
// with the CPU and memory discipline of orchbench's generator.
type ToolRunner struct {
	Tool toolload.Tool
	// Base supplies the client and the waiting; its JobFile locates
	// loadtool.nomad.hcl beside loadgen.nomad.hcl.
	Base *LoadRunner
	// Image is the tool's image; JobPrefix starts every job's ID.
	Image, JobPrefix string
	// Nodes reads the kernel of the node the tool's task runs on; nil
	// reads this machine.
	Nodes nodeprobe.Resolver
}

// In the job, a tool reads its files from its task directory's local/
// (templates of the job) and writes its result to the shared alloc/.
const (
	inputsInJob  = "/local"
	outputsInJob = "/alloc"
)

// measuredTask is the job's task of the measured run (the warm-up is
// the prestart task "warmup").
const measuredTask = "load"

// taskRunning is a TaskState's State while the task runs (Nomad's
// structs.TaskStateRunning, which its api package does not export).
const taskRunning = "running"

func (t *ToolRunner) Name() string { return Name + "/" + t.Tool.Name() }

// ToolLoadRunner is the runner of a named tool: orchestrator.ToolRunners.
func (a *Orchestrator) ToolLoadRunner(tool string) (orchestrator.LoadRunner, error) {
	tl, err := toolload.Lookup(tool)
	if err != nil {
		return nil, err
	}
	base := a.LoadRunner().(*LoadRunner)
	return &ToolRunner{Tool: tl, Base: base, Image: orchestrator.ToolImage(base.Image, tool), JobPrefix: a.JobPrefix, Nodes: a.Nodes}, nil
}

func (t *ToolRunner) jobFile() string {
	dir := "jobs"
	if t.Base.JobFile != "" {
		dir = filepath.Dir(t.Base.JobFile)
	}
	return filepath.Join(dir, "loadtool.nomad.hcl")
}

func (t *ToolRunner) Run(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, error) {
	res, raw, _, err := t.RunObserved(ctx, req)
	return res, raw, err
}

// RunObserved runs the tool's job and samples its measured task's cgroup
// meanwhile: orchestrator.ObservedRunner.
func (t *ToolRunner) RunObserved(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, orchestrator.ToolRun, error) {
	var run orchestrator.ToolRun
	name := t.Tool.Name()
	files, err := t.Tool.Files(req.Tool)
	if err != nil {
		return nil, nil, run, err
	}
	warm, args, err := t.Tool.Command(req.Tool, inputsInJob, outputsInJob)
	if err != nil {
		return nil, nil, run, err
	}
	src, err := os.ReadFile(t.jobFile())
	if err != nil {
		return nil, nil, run, fmt.Errorf("load runner %s: %w", name, err)
	}
	if files == nil {
		files = map[string]string{}
	}
	filesJSON, _ := json.Marshal(files)
	vars := fmt.Sprintf("image = %q\nargs = %s\nwarmup_args = %s\nfiles = %s\nmemory = %d\n", t.Image, hclList(args), hclList(warm), filesJSON, toolload.MemoryMiB(t.Tool, orchestrator.LoadMemoryMiB))
	if req.GeneratorCores > 0 {
		if req.MHzPerCore <= 0 {
			return nil, nil, run, fmt.Errorf("generator_cores = %g: the node's MHz per core is unknown", req.GeneratorCores)
		}
		vars += fmt.Sprintf("cpu = %d\ncpu_hard_limit = true\n", max(1, int(req.GeneratorCores*req.MHzPerCore+0.5)))
	}
	c := t.Base.Client
	job, err := c.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: string(src), Variables: vars, Canonicalize: true})
	if err != nil {
		return nil, nil, run, fmt.Errorf("load runner %s: %s: %w", name, t.jobFile(), err)
	}
	prefix := t.JobPrefix
	if prefix == "" {
		prefix = orchestrator.DefaultLoadJobPrefix
	}
	// unique per run: Nomad keeps a purged job's evaluations for a while,
	// and a failed placement of an earlier run under the same ID would be
	// read as this one's
	id := orchestrator.JobName(prefix+"-"+name+"-"+req.StepID) + "-" + strconv.FormatInt(time.Now().UnixMilli(), 36)
	job.ID, job.Name = &id, &id
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		return nil, nil, run, fmt.Errorf("load runner %s: register %s: %w", name, id, err)
	}
	// the job is only a vehicle; its result lives in the archive
	defer c.Jobs().Deregister(id, true, nil)
	ctx, cancel := context.WithTimeout(ctx, req.Bound)
	defer cancel()
	stop := make(chan struct{})
	watched := make(chan orchestrator.ToolRun, 1)
	locate, read := t.taskCgroup(ctx, id)
	go func() { watched <- sampleTaskCPU(stop, locate, read, time.Second) }()
	alloc, err := t.Base.waitDone(ctx, id, req.MarkStarted)
	close(stop)
	run = <-watched
	if err != nil {
		return nil, nil, run, fmt.Errorf("load runner %s: %w", name, err)
	}
	run.Started, run.Ended = taskTimes(alloc, measuredTask)
	var raw []byte
	tasks := []string{measuredTask}
	if warm != nil {
		// a job without a warm-up has no such task, nor its logs to read
		tasks = []string{"warmup", measuredTask}
	}
	for _, task := range tasks {
		raw = append(raw, t.Base.cat(alloc, "alloc/logs/"+task+".stdout.0")...)
		raw = append(raw, t.Base.cat(alloc, "alloc/logs/"+task+".stderr.0")...)
	}
	failure := allocFailure(alloc)
	rc, err := c.AllocFS().Cat(alloc, "alloc/"+t.Tool.ResultFile(), nil)
	if err != nil {
		if failure == "" {
			failure = "left no result: " + err.Error()
		}
		return nil, raw, run, fmt.Errorf("load runner %s: job %s (alloc %s) %s: %s", name, id, orchestrator.ShortID(alloc.ID), failure, orchestrator.LastLine(string(raw)))
	}
	out, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, raw, run, fmt.Errorf("load runner %s: read result: %w", name, err)
	}
	raw = append(append(raw, orchestrator.ToolOutputMark(name)...), out...)
	res, perr := t.Tool.Parse(out)
	if res != nil && perr == nil {
		perr = run.Settle(res, req.Tool)
	}
	switch {
	case res == nil && failure != "":
		return nil, raw, run, fmt.Errorf("load runner %s: job %s (alloc %s) %s, and left no readable result (%v)", name, id, orchestrator.ShortID(alloc.ID), failure, perr)
	case res == nil:
		// Nomad's file API answers a missing file with its error as the content
		return nil, raw, run, fmt.Errorf("load runner %s: %w (alloc %s's alloc/%s begins %q; the tool's last words: %s)", name, perr, orchestrator.ShortID(alloc.ID),
			t.Tool.ResultFile(), orchestrator.Head(out, 120), orchestrator.LastLine(string(raw[:len(raw)-len(out)-len(orchestrator.ToolOutputMark(name))])))
	case failure != "":
		return res, raw, run, fmt.Errorf("load runner %s: job %s (alloc %s) %s", name, id, orchestrator.ShortID(alloc.ID), failure)
	case perr != nil:
		// kept for the archive; the step is invalid
		return res, raw, run, fmt.Errorf("load runner %s: job %s (alloc %s): %w", name, id, orchestrator.ShortID(alloc.ID), perr)
	}
	return res, raw, run, nil
}

// taskTimes are when a task of a finished allocation really started and
// ended, as its client recorded them.
func taskTimes(alloc *api.Allocation, task string) (started, ended time.Time) {
	if ts := alloc.TaskStates[task]; ts != nil {
		return ts.StartedAt, ts.FinishedAt
	}
	return started, ended
}

// taskCgroup gives the sampler of the job's measured task its two reads:
// locate finds the task's cgroup once it runs ("" until then, an error when
// its node cannot be read), and read reads that cgroup on the task's node.
// The sampler calls read only after locate has found the cgroup.
func (t *ToolRunner) taskCgroup(ctx context.Context, jobID string) (locate func() (string, float64, error), read func(string) (limits.Usage, error)) {
	var node nodeprobe.Node // the task's, once located
	read = func(cgroup string) (limits.Usage, error) { return node.Usage(ctx, cgroup) }
	locate = func() (string, float64, error) {
		stubs, _, err := t.Base.Client.Jobs().Allocations(jobID, true, (&api.QueryOptions{}).WithContext(ctx))
		if err != nil || len(stubs) == 0 {
			return "", 0, nil
		}
		s := stubs[0]
		ts := s.TaskStates[measuredTask]
		if ts == nil || ts.State != taskRunning {
			return "", 0, nil
		}
		node = t.Nodes.Node(s.NodeName)
		pid, _, err := taskPID(ctx, node, orchestrator.Instance{ID: s.ID, Task: measuredTask, Driver: "docker"})
		if err != nil {
			return "", 0, fmt.Errorf("the tool's task on node %s: %w", s.NodeName, err)
		}
		e, err := node.Limits(ctx, pid)
		if err != nil {
			return "", 0, fmt.Errorf("the tool's task (pid %d): %w", pid, err)
		}
		return e.CgroupPath, e.EffectiveCores(), nil
	}
	return locate, read
}

// sampleTaskCPU reads a task's cgroup every period from when locate finds
// it until it is gone (the task has exited) or stop is closed. A task that
// cannot be located says why in CPUError; its CPU is then unknown.
func sampleTaskCPU(stop <-chan struct{}, locate func() (string, float64, error), read func(string) (limits.Usage, error), every time.Duration) orchestrator.ToolRun {
	var run orchestrator.ToolRun
	// look for the task more often than it is sampled: its first reading
	// should come as soon after its start as can be
	look := time.NewTicker(every / 4)
	defer look.Stop()
	cgroup := ""
	for cgroup == "" {
		path, limit, err := locate()
		switch {
		case err != nil:
			run.CPUError = err.Error()
			return run
		case path != "":
			cgroup, run.LimitCores = path, limit
			run.CPUSource = "cgroup " + path
			continue
		}
		select {
		case <-stop:
			run.CPUError = "the tool's task was not seen running"
			return run
		case <-look.C:
		}
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		u, err := read(cgroup)
		if err != nil {
			return run // the cgroup went with the task
		}
		run.CPU = append(run.CPU, u)
		select {
		case <-stop:
			if u, err := read(cgroup); err == nil {
				run.CPU = append(run.CPU, u)
			}
			return run
		case <-tick.C:
		}
	}
}

// hclList writes a list of strings as an HCL literal (JSON's is one).
func hclList(s []string) string {
	if s == nil {
		s = []string{}
	}
	b, _ := json.Marshal(s)
	return string(b)
}
