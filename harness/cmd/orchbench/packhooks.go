package main

import (
	"context"
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

// `pack run` runs a pack's hooks as a sweep's deployment does: prepare
// before deploying, and once healthy, setup on a fresh deployment and
// verification, so a deployment it reports ready holds its dataset. It
// keeps no completion marker: a sweep's own checks decide about reuse.

// runPrepareHooks runs each job's prepare hook on this host.
func runPrepareHooks(ctx context.Context, out io.Writer, jobs []*api.Job) error {
	for _, job := range jobs {
		app, err := contract.ParseApp(job)
		if err != nil {
			return err
		}
		if app.Prepare.Args != nil {
			if err := runPackHook(ctx, out, "prepare", app.Job, "", app.Prepare.Args, app.Prepare.Timeout); err != nil {
				return err
			}
		}
	}
	return nil
}

// runSetupAndVerify runs setup on each freshly deployed job that declares
// it, then every declared verification, against the first instance of the
// job's measured service.
func runSetupAndVerify(ctx context.Context, out io.Writer, o orchestrator.Orchestrator, deployed []*orchestrator.Deployment) error {
	for _, d := range deployed {
		app := d.App
		if !app.Measured() || (app.Setup.Args == nil && app.Verify.Args == nil) {
			continue
		}
		eps, err := o.Endpoints(ctx, d, app.Service)
		if err != nil {
			return fmt.Errorf("no endpoint of %s for the hooks: %w", app.Service, err)
		}
		ep := eps[0]
		if app.Setup.Args != nil && d.Fresh {
			if err := runPackHook(ctx, out, "setup", d.Job, ep.NetNS, app.Setup.Fill(ep.HostPort()), app.Setup.Timeout); err != nil {
				return err
			}
		}
		if app.Verify.Args != nil {
			if err := runPackHook(ctx, out, "verify", d.Job, ep.NetNS, app.Verify.Fill(ep.HostPort()), app.Verify.Timeout); err != nil {
				return err
			}
		}
	}
	return nil
}

// runPackHook runs this orchbench binary with args in ns, its output
// indented under a line naming the hook.
func runPackHook(ctx context.Context, out io.Writer, what, job string, ns netns.Path, args []string, timeout time.Duration) error {
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fmt.Fprintf(out, "%s of %s: orchbench %s\n", what, job, strings.Join(args, " "))
	began := time.Now()
	cmd := ns.Command(ctx, bin, args...)
	w := &indentWriter{w: out, prefix: "  " + what + ": ", atStart: true}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s of %s failed after %.1f s: %w", what, job, time.Since(began).Seconds(), err)
	}
	fmt.Fprintf(out, "%s of %s finished in %.1f s\n", what, job, time.Since(began).Seconds())
	return nil
}

// indentWriter puts prefix before every line.
type indentWriter struct {
	w       io.Writer
	prefix  string
	atStart bool
}

func (iw *indentWriter) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if iw.atStart {
			if _, err := io.WriteString(iw.w, iw.prefix); err != nil {
				return 0, err
			}
		}
		if _, err := io.WriteString(iw.w, line); err != nil {
			return 0, err
		}
		iw.atStart = strings.HasSuffix(line, "\n")
	}
	return len(b), nil
}
