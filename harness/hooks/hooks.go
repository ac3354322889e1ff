// Package hooks runs a pack's hooks (contract.Hook): orchbench commands a
// pack declares to make what its jobs need before they are deployed
// (prepare), to load its dataset (setup) and to check that dataset
// (verify). The sweep and `orchbench pack run` both run hooks through it,
// so a hook's output, its time and its problem lines read the same
// whichever ran it.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// Kind is which of a pack's hooks a call runs.
type Kind string

const (
	Prepare Kind = "prepare"
	Setup   Kind = "setup"
	Verify  Kind = "verify"
)

// noun names the hook in a failure, as a gate detail or an error reads it.
func (k Kind) noun() string {
	switch k {
	case Prepare:
		return "prepare hook"
	case Verify:
		return "verification"
	}
	return string(k)
}

// Call is one run of a hook.
type Call struct {
	Kind Kind
	// Job is the job that declares the hook; it names the run in the output.
	Job string
	// NetNS is where the hook runs: its endpoint's network namespace, ""
	// for the harness's own.
	NetNS netns.Path
	// Args are the orchbench arguments, "{{endpoint}}" already filled.
	Args    []string
	Timeout time.Duration
}

// OnHost is the call of a hook that runs on the harness's host and needs
// no endpoint: a prepare hook, which runs before its job exists.
func OnHost(kind Kind, job string, hook contract.Hook) Call {
	return Call{Kind: kind, Job: job, Args: hook.Args, Timeout: hook.Timeout}
}

// At is the call of a hook aimed at ep: "{{endpoint}}" becomes ep's
// address and the hook runs where that address is reachable.
func At(kind Kind, job string, hook contract.Hook, ep orchestrator.Endpoint) Call {
	return Call{Kind: kind, Job: job, NetNS: ep.NetNS, Args: hook.Fill(ep.HostPort()), Timeout: hook.Timeout}
}

// PrepareCalls are the prepare hooks the jobs declare, in the jobs' order.
// Every job is read before any hook runs, so a malformed one stops the
// deployment before anything was made for it.
func PrepareCalls(jobs []*api.Job) ([]Call, error) {
	var calls []Call
	for _, job := range jobs {
		app, err := contract.ParseApp(job)
		if err != nil {
			return nil, err
		}
		if app.Prepare.Args != nil {
			calls = append(calls, OnHost(Prepare, app.Job, app.Prepare))
		}
	}
	return calls, nil
}

// Problem is one thing a hook reported wrong, from an output line
// "problem: ..." (the text after the colon).
type Problem string

// Result is what a hook's run left behind, failed or not.
type Result struct {
	// Took is the hook's wall time, from start to exit.
	Took time.Duration
	// Last is the last non-blank line of its output: what a hook says last
	// is its conclusion, or why it gave up.
	Last string
	// Problems are its problem lines, the first maxProblems of them.
	Problems []Problem
}

// Failure is a hook that did not succeed: it exited non-zero, was still
// running at its timeout, or could not be started.
type Failure struct {
	Call   Call
	Result Result
	Err    error
}

// problemsQuoted is how many problem lines a failure's message quotes.
const problemsQuoted = 3

func (f *Failure) Error() string {
	msg := fmt.Sprintf("%s (orchbench %s) failed after %.1f s: %v", f.Call.Kind.noun(), strings.Join(f.Call.Args, " "), f.Result.Took.Seconds(), f.Err)
	problems := f.Result.Problems
	if len(problems) == 0 {
		if f.Result.Last != "" {
			msg += ": " + f.Result.Last
		}
		return msg
	}
	quoted := make([]string, 0, problemsQuoted)
	for _, p := range problems[:min(len(problems), problemsQuoted)] {
		quoted = append(quoted, fmt.Sprintf("%q", string(p)))
	}
	lines := "problem lines"
	if len(problems) == 1 {
		lines = "problem line"
	}
	msg += fmt.Sprintf(": %d %s: %s", len(problems), lines, strings.Join(quoted, "; "))
	if len(problems) > problemsQuoted {
		msg += fmt.Sprintf(" and %d more", len(problems)-problemsQuoted)
	}
	return msg
}

func (f *Failure) Unwrap() error { return f.Err }

// Runner runs hooks.
type Runner struct {
	// Binary is the orchbench the hooks run; "" is this process's own
	// executable.
	Binary string
	// Out shows each run as it goes: a line naming it, its output with
	// every line under a prefix naming the hook (a dataset load takes
	// minutes and should not look stuck), and its time when it succeeds.
	Out io.Writer
	// Env is the hooks' environment; nil inherits this process's.
	Env []string
}

// waitDelay bounds how long a hook's output may stay open after the hook
// exits or is killed: a grandchild holding it must not outlast the bound.
const waitDelay = 5 * time.Second

// Run runs the call and returns what it left. Any error is a *Failure,
// whose message carries the hook's problem lines, or its last line when
// it printed none.
func (r Runner) Run(ctx context.Context, call Call) (Result, error) {
	fail := func(res Result, err error) (Result, error) {
		return res, &Failure{Call: call, Result: res, Err: err}
	}
	bin := r.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return fail(Result{}, err)
		}
	}
	fmt.Fprintf(r.Out, "%s of %s: orchbench %s\n", call.Kind, call.Job, strings.Join(call.Args, " "))
	hookCtx, cancel := context.WithTimeout(ctx, call.Timeout)
	defer cancel()
	out := &outputWriter{w: r.Out, prefix: "  " + string(call.Kind) + ": "}
	cmd := call.NetNS.Command(hookCtx, bin, call.Args...)
	if r.Env != nil {
		cmd.Env = r.Env
	}
	// one writer for both, so exec calls it from one goroutine at a time
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = waitDelay
	began := time.Now()
	err := cmd.Run()
	out.flush()
	res := Result{Took: time.Since(began), Last: out.last, Problems: out.problems}
	if err != nil {
		if errors.Is(hookCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			// "signal: killed" alone would not say the pack's bound did it
			err = fmt.Errorf("not finished within its timeout of %s (%w)", call.Timeout, err)
		}
		return fail(res, err)
	}
	fmt.Fprintf(r.Out, "%s of %s finished in %.1f s\n", call.Kind, call.Job, res.Took.Seconds())
	return res, nil
}
