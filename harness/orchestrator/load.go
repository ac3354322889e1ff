package orchestrator

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/toolload"
)

// LoadRequest is one load run: the target and `orchbench load` flags.
type LoadRequest struct {
	StepID string
	URL    string
	// NetNS is the network namespace URL is reached in ("" for the
	// harness's own); a runner beside the application is in it already.
	NetNS netns.Path
	// Args are `orchbench load` flags without the URL, so the same request
	// runs locally, in an orchestrator's one-shot job, or by hand.
	Args []string
	// Bound is how long the run may take in total before it is abandoned.
	Bound time.Duration
	// Started, when set, is closed as the generator starts, so a fault can
	// be timed against the load rather than against the dispatch.
	Started chan struct{}
	// GeneratorCores caps the generator's CPU (0: a reservation only);
	// MHzPerCore turns it into Nomad's MHz.
	GeneratorCores float64
	MHzPerCore     float64
	// Tool is what a study's own tool is asked to do, for a runner of
	// ToolRunners; orchbench's generator reads Args instead.
	Tool toolload.Request
}

// ToolRunners is implemented by an orchestrator that can run the studies'
// own load tools (toolload) as its one-shot jobs.
type ToolRunners interface {
	ToolLoadRunner(tool string) (LoadRunner, error)
}

// ObservedRunner is the LoadRunner of a study's tool that also reports
// what it saw of the tool from outside it: the facts orchbench's generator
// reports about itself and a tool does not (its CPU, when it really ran).
type ObservedRunner interface {
	LoadRunner
	RunObserved(ctx context.Context, req LoadRequest) (*loadgen.Result, []byte, ToolRun, error)
}

// ToolRun is what a runner saw of a tool's measured run (its warm-up run
// excluded) from outside the tool.
type ToolRun struct {
	// Started and Ended bound the measured run's process or task.
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// CPU are cumulative readings of the tool's CPU, in time order, taken
	// during the run: its cgroup's, or its process's at start and end.
	CPU []limits.Usage `json:"-"`
	// CPUSource says where CPU was read; CPUError, when set, why it could
	// not be (then the tool's saturation cannot be judged).
	CPUSource string `json:"cpu_source,omitempty"`
	CPUError  string `json:"cpu_error,omitempty"`
	// LimitCores is the tightest CPU cap the tool ran under (its quota, an
	// enclosing one, its cpuset; the machine's cores); 0 when unknown.
	LimitCores float64 `json:"limit_cores,omitempty"`
}

// toolClockSkew is how far a tool's own timestamps may lie outside the
// process or task times the runner saw: the two clocks are the same
// machine's, read at slightly different moments of the start and exit.
const toolClockSkew = time.Second

// Settle takes the result's wall time from the run's real end (a tool
// does not report when it stopped) and checks the result against the run
// and the request: a measured window that begins before the tool started
// is not this run's, and a tool that ran other connections than asked did
// not measure the step declared. The result is kept either way.
func (r ToolRun) Settle(res *loadgen.Result, req toolload.Request) error {
	if res == nil {
		return nil
	}
	if r.Ended.IsZero() {
		return fmt.Errorf("the runner did not see the tool's run end, so its wall time is unknown")
	}
	res.WallSeconds = r.Ended.Sub(res.Start).Seconds()
	switch {
	case res.Start.Before(r.Started.Add(-toolClockSkew)):
		return fmt.Errorf("the result's window begins at %s, %.1f s before the tool's run started (%s): it is not this run's result",
			res.Start.Format(time.RFC3339Nano), r.Started.Sub(res.Start).Seconds(), r.Started.Format(time.RFC3339Nano))
	case res.End.After(r.Ended.Add(toolClockSkew)):
		return fmt.Errorf("the result's window ends at %s, %.1f s after the tool's run ended (%s)",
			res.End.Format(time.RFC3339Nano), res.End.Sub(r.Ended).Seconds(), r.Ended.Format(time.RFC3339Nano))
	case res.Config.Connections > 0 && res.Config.Connections != req.Connections:
		return fmt.Errorf("the tool ran %d connections, %d were asked", res.Config.Connections, req.Connections)
	}
	return nil
}

// ToolImage is the image of a tool's job: orchbench/<tool> with the tag of
// the generator's image, so IMAGE_TAG=x cluster/images.sh orchbench fortio
// gives a matching pair, from the same registry when the generator's names
// one (registry/orchbench/orchbench:tag).
func ToolImage(loadImage, tool string) string {
	tag := "local"
	if i := strings.LastIndexByte(loadImage, ':'); i >= 0 && !strings.Contains(loadImage[i:], "/") {
		tag = loadImage[i+1:]
	}
	registry := ""
	if i := strings.Index(loadImage, "/orchbench/"); i > 0 {
		registry = loadImage[:i+1]
	}
	return registry + "orchbench/" + tool + ":" + tag
}

// JobName makes s a valid job or object name: letters, digits and dashes,
// lower case, at most 54 characters, leaving room for a suffix within the
// 63 of the strictest orchestrator.
func JobName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	if len(b) > 54 {
		b = b[:54]
	}
	return strings.Trim(string(b), "-")
}

// MarkStarted closes Started, once, when the generator has begun.
func (r LoadRequest) MarkStarted() {
	if r.Started != nil {
		close(r.Started)
	}
}

// CommandLine is the equivalent shell command, archived with the result.
func (r LoadRequest) CommandLine() string {
	return "orchbench load " + strings.Join(append(append([]string{}, r.Args...), r.URL), " ")
}

// LoadRunner runs load and returns the result and the generator's text
// output. A partial result comes back with the error, to be archived.
type LoadRunner interface {
	// Name says where the generator ran, recorded with every step.
	Name() string
	Run(ctx context.Context, req LoadRequest) (*loadgen.Result, []byte, error)
}

// LastLine is the last non-empty line of a generator's output, which says
// why it stopped.
func LastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// How a load job that cannot take a dispatch payload gets its flags and
// script: in its environment.
const (
	EnvLoadArgs   = "ORCHBENCH_LOAD_ARGS"
	EnvLoadScript = "ORCHBENCH_LOAD_SCRIPT"
)

// The load generator's one-shot job is the same on every orchestrator: this
// image, with this memory limit (jobs/loadgen.nomad.hcl's, for Nomad).
const (
	DefaultLoadImage = "orchbench/orchbench:local"
	LoadMemoryMiB    = 256
)

// ToolOutputMark separates a tool's console output from its result file in
// a runner's raw output, which the archive keeps whole.
func ToolOutputMark(tool string) []byte {
	return []byte("\n--- " + tool + " result file, as written ---\n")
}

// Head is the start of a tool's output, for a message about it.
func Head(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// DefaultLoadJobPrefix starts the IDs of the jobs running a study's tool.
const DefaultLoadJobPrefix = "orchbench-load"

// MaxScript bounds a Lua script carried into a load job (Nomad's dispatch
// payload limit, kept for every orchestrator so a spec runs on all of them).
const MaxScript = 16 << 10

// ShipScript moves a wrk Lua script (-s PATH) out of the arguments, since
// the job's container cannot see the harness's files: it returns the
// arguments with the path replaced by inJob, and the script's text (nil
// when there is none). A script that loads other files cannot travel so.
func ShipScript(args []string, inJob string) ([]string, []byte, error) {
	out := append([]string{}, args...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] != "-s" && out[i] != "--script" {
			continue
		}
		src, err := os.ReadFile(out[i+1])
		if err != nil {
			return nil, nil, fmt.Errorf("load script: %w", err)
		}
		if len(src) > MaxScript {
			return nil, nil, fmt.Errorf("load script %s is %d bytes; a load job carries at most %d (use --load-runner local)", out[i+1], len(src), MaxScript)
		}
		out[i+1] = inJob
		return out, src, nil
	}
	return out, nil, nil
}

// UnpackScript writes a script shipped base64-encoded in the environment to
// the path the arguments' -s names; nothing when none was shipped.
func UnpackScript(args []string, encoded string) error {
	if encoded == "" {
		return nil
	}
	src, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return fmt.Errorf("%s: %w", EnvLoadScript, err)
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-s" || args[i] == "--script" {
			if err := os.MkdirAll(filepath.Dir(args[i+1]), 0o755); err != nil {
				return err
			}
			return os.WriteFile(args[i+1], src, 0o644)
		}
	}
	return fmt.Errorf("%s is set but the arguments name no -s script", EnvLoadScript)
}
