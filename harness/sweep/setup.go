package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// setup runs the pack's setup hook (orchbench_setup_args, a JSON list of
// orchbench arguments, e.g. a dataset load) after a fresh deployment.
// "{{endpoint}}" in an argument becomes the first instance's host:port.
func (r *Runner) setup(ctx context.Context, dep *deployment, fresh bool) error {
	raw := dep.app.Meta["orchbench_setup_args"]
	if raw == "" || !fresh {
		return nil
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		return fmt.Errorf("setup: orchbench_setup_args %q is not a JSON list: %w", raw, err)
	}
	timeout := 30 * time.Minute
	if s := dep.app.Meta["orchbench_setup_timeout"]; s != "" {
		if d, err := time.ParseDuration(s); err == nil {
			timeout = d
		}
	}
	eps, err := r.Nomad.Endpoints(ctx, dep.app, dep.app.Meta["orchbench_service"])
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "{{endpoint}}", eps[0].HostPort())
	}
	bin := r.Orchbench
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	began := time.Now()
	defer func() { r.setupSpent += time.Since(began) }()
	fmt.Fprintf(r.Out, "setup of %s: orchbench %s\n", dep.app.Job, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, args...)
	// a dataset load takes minutes: show its progress as it comes
	out := &prefixWriter{w: r.Out, prefix: "  setup: "}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("setup (orchbench %s) failed after at most %s: %v: %s", strings.Join(args, " "), timeout, err, out.last)
	}
	return nil
}

// prefixWriter indents a child's output lines and remembers the last one.
type prefixWriter struct {
	w       io.Writer
	prefix  string
	partial []byte
	last    string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(p.partial[:i])
		p.partial = p.partial[i+1:]
		if strings.TrimSpace(line) != "" {
			p.last = line
		}
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, line)
	}
}
