package orchestrator

import (
	"context"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// LoadRequest is one load run: the target and `orchbench load` flags.
type LoadRequest struct {
	StepID string
	URL    string
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
