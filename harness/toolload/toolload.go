// Package toolload runs the published studies' own load tools (Fortio for
// study 000) as alternatives to orchbench's generator: for each tool, the
// command line of a step and a parser of its output into loadgen.Result,
// so a step's gates, archive and report do not care which tool ran. Where
// the tool runs (a Nomad job, a local process) is the runner's business.
package toolload

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// Request is what a tool is asked to do: a closed loop of Connections
// users against URL (each pausing Think between a reply and its next
// request; none is the maximum rate), for Duration after Warmup.
type Request struct {
	URL         string        `json:"url"`
	Connections int           `json:"connections"`
	Think       time.Duration `json:"think_ns,omitempty"`
	// SpawnRate starts the users at this many a second (0: all at once).
	SpawnRate float64 `json:"spawn_rate,omitempty"`
	// Locustfile, when set, is the locustfile Locust runs (a study's own
	// flow and wait time) instead of one generated for URL's path.
	Locustfile string        `json:"locustfile,omitempty"`
	Warmup     time.Duration `json:"warmup_ns"`
	Duration   time.Duration `json:"duration_ns"`
	// Timeout is the per-request timeout (0: the tool's default).
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	// Iterations, when set, replaces the closed loop with a JMeter-style
	// thread group: Iterations.Threads users each send the sequence Loops
	// times, back to back, bounded by Duration. URL then gives only the
	// scheme, host and port.
	Iterations *Iterations `json:"iterations,omitempty"`
	// Rate and Phases, when set, replace the closed loop with open-loop
	// arrivals: Phases (absolute rates) are the measured run, whose
	// length is Duration, and a warm-up runs at Rate.
	Rate   float64         `json:"rate,omitempty"`
	Phases []loadgen.Phase `json:"phases,omitempty"`
}

// Iterations is a thread group: Threads users, each running Requests in
// order Loops times.
type Iterations struct {
	Threads  int           `json:"threads"`
	Loops    int           `json:"loops"`
	Requests []HTTPRequest `json:"requests"`
}

// HTTPRequest is one request of an iterations sequence.
type HTTPRequest struct {
	Method string `json:"method"`
	// Path is the request target: path and query.
	Path        string `json:"path"`
	Body        string `json:"body,omitempty"`
	ContentType string `json:"content_type,omitempty"`
}

// Label is how the request's endpoint is named in a result, as
// orchbench's generator names the same request: "METHOD path".
func (r HTTPRequest) Label() string { return r.Method + " " + r.Path }

// Tool is one load tool.
type Tool interface {
	// Name is the spec's runner name.
	Name() string
	// Files are the inputs the tool reads (a Locust locustfile), by file
	// name; the runner puts them in the directory it passes as in.
	Files(req Request) (map[string]string, error)
	// Command gives the tool's arguments for the warm-up (nil for none)
	// and for the measured run, which writes ResultFile in out.
	Command(req Request, in, out string) (warmup, run []string, err error)
	ResultFile() string
	// Slack is how much shorter than the duration asked a complete run's
	// measured window may be: the tool's own start-up inside its run time.
	Slack() time.Duration
	// MaxCores is the most CPU the tool can use whatever it is given (a
	// single-threaded tool's one core); 0 when only its cap bounds it.
	MaxCores() float64
	// Parse turns the result file into a loadgen.Result; garbled or
	// missing output is an error naming the tool. A result whose own
	// figures disagree comes back with an error saying which, so it is
	// archived and the step is invalid. WallSeconds is left 0: when the
	// tool stopped is for its runner to say (orchestrator.ToolRun).
	Parse(out []byte) (*loadgen.Result, error)
}

// inconsistent is the error of a result whose own figures disagree.
func inconsistent(tool string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s result contradicts itself: %s", tool, strings.Join(problems, "; "))
}

var tools = map[string]Tool{}

func register(t Tool) { tools[t.Name()] = t }

// Lookup finds a tool by its runner name.
func Lookup(name string) (Tool, error) {
	if t, ok := tools[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("load runner %q is not a tool of this build; tools: %s", name, strings.Join(Names(), ", "))
}

// Names lists the tools, sorted.
func Names() []string {
	out := make([]string, 0, len(tools))
	for n := range tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
