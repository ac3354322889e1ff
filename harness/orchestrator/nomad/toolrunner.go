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
	"github.com/orchbench/orchbench/harness/loadgen"
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
}

// In the job, a tool reads its files from its task directory's local/
// (templates of the job) and writes its result to the shared alloc/.
const (
	inputsInJob  = "/local"
	outputsInJob = "/alloc"
)

func (t *ToolRunner) Name() string { return Name + "/" + t.Tool.Name() }

// ToolLoadRunner is the runner of a named tool: orchestrator.ToolRunners.
func (a *Adapter) ToolLoadRunner(tool string) (orchestrator.LoadRunner, error) {
	tl, err := toolload.Lookup(tool)
	if err != nil {
		return nil, err
	}
	base := a.LoadRunner().(*LoadRunner)
	return &ToolRunner{Tool: tl, Base: base, Image: orchestrator.ToolImage(base.Image, tool), JobPrefix: a.JobPrefix}, nil
}

func (t *ToolRunner) jobFile() string {
	dir := "jobs"
	if t.Base.JobFile != "" {
		dir = filepath.Dir(t.Base.JobFile)
	}
	return filepath.Join(dir, "loadtool.nomad.hcl")
}

func (t *ToolRunner) Run(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, error) {
	name := t.Tool.Name()
	files, err := t.Tool.Files(req.Tool)
	if err != nil {
		return nil, nil, err
	}
	warm, args, err := t.Tool.Command(req.Tool, inputsInJob, outputsInJob)
	if err != nil {
		return nil, nil, err
	}
	src, err := os.ReadFile(t.jobFile())
	if err != nil {
		return nil, nil, fmt.Errorf("load runner %s: %w", name, err)
	}
	if files == nil {
		files = map[string]string{}
	}
	filesJSON, _ := json.Marshal(files)
	vars := fmt.Sprintf("image = %q\nargs = %s\nwarmup_args = %s\nfiles = %s\nmemory = %d\n", t.Image, hclList(args), hclList(warm), filesJSON, orchestrator.LoadMemoryMiB)
	if req.GeneratorCores > 0 {
		if req.MHzPerCore <= 0 {
			return nil, nil, fmt.Errorf("generator_cores = %g: the node's MHz per core is unknown", req.GeneratorCores)
		}
		vars += fmt.Sprintf("cpu = %d\ncpu_hard_limit = true\n", max(1, int(req.GeneratorCores*req.MHzPerCore+0.5)))
	}
	c := t.Base.Client
	job, err := c.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: string(src), Variables: vars, Canonicalize: true})
	if err != nil {
		return nil, nil, fmt.Errorf("load runner %s: %s: %w", name, t.jobFile(), err)
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
		return nil, nil, fmt.Errorf("load runner %s: register %s: %w", name, id, err)
	}
	// the job is only a vehicle; its result lives in the archive
	defer c.Jobs().Deregister(id, true, nil)
	ctx, cancel := context.WithTimeout(ctx, req.Bound)
	defer cancel()
	alloc, err := t.Base.waitDone(ctx, id, req.MarkStarted)
	if err != nil {
		return nil, nil, fmt.Errorf("load runner %s: %w", name, err)
	}
	var raw []byte
	for _, task := range []string{"warmup", "load"} {
		raw = append(raw, t.Base.cat(alloc, "alloc/logs/"+task+".stdout.0")...)
		raw = append(raw, t.Base.cat(alloc, "alloc/logs/"+task+".stderr.0")...)
	}
	failure := allocFailure(alloc)
	rc, err := c.AllocFS().Cat(alloc, "alloc/"+t.Tool.ResultFile(), nil)
	if err != nil {
		if failure == "" {
			failure = "left no result: " + err.Error()
		}
		return nil, raw, fmt.Errorf("load runner %s: job %s (alloc %s) %s: %s", name, id, orchestrator.ShortID(alloc.ID), failure, orchestrator.LastLine(string(raw)))
	}
	out, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, raw, fmt.Errorf("load runner %s: read result: %w", name, err)
	}
	raw = append(append(raw, orchestrator.ToolOutputMark(name)...), out...)
	res, perr := t.Tool.Parse(out)
	switch {
	case perr != nil && failure != "":
		return nil, raw, fmt.Errorf("load runner %s: job %s (alloc %s) %s, and left no readable result (%v)", name, id, orchestrator.ShortID(alloc.ID), failure, perr)
	case perr != nil:
		// Nomad's file API answers a missing file with its error as the content
		return nil, raw, fmt.Errorf("load runner %s: %w (alloc %s's alloc/%s begins %q; the tool's last words: %s)", name, perr, orchestrator.ShortID(alloc.ID),
			t.Tool.ResultFile(), orchestrator.Head(out, 120), orchestrator.LastLine(string(raw[:len(raw)-len(out)-len(orchestrator.ToolOutputMark(name))])))
	case failure != "":
		return res, raw, fmt.Errorf("load runner %s: job %s (alloc %s) %s", name, id, orchestrator.ShortID(alloc.ID), failure)
	}
	return res, raw, nil
}

// hclList writes a list of strings as an HCL literal (JSON's is one).
func hclList(s []string) string {
	if s == nil {
		s = []string{}
	}
	b, _ := json.Marshal(s)
	return string(b)
}
