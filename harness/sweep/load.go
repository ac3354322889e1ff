package sweep

import (
	"bytes"
	"context"
	"fmt"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"os"
	"path/filepath"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// LocalRunner runs the generator as a child process of the harness on this
// machine; a separate process keeps the harness's own work out of its timing.
type LocalRunner struct {
	// Binary is the orchbench executable (default: this process's own).
	Binary string
}

func (LocalRunner) Name() string { return "local" }

func (l LocalRunner) Run(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, error) {
	if req.GeneratorCores > 0 {
		return nil, nil, fmt.Errorf("generator_cores = %g needs the orchestrator's load job (--load-runner orchestrator): the local runner cannot cap the generator's CPU", req.GeneratorCores)
	}
	bin := l.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, nil, err
		}
	}
	dir, err := os.MkdirTemp("", "orchbench-load")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "result.json")
	ctx, cancel := context.WithTimeout(ctx, req.Bound)
	defer cancel()
	args := append(append([]string{"load"}, req.Args...), "-o", out, req.URL)
	var raw bytes.Buffer
	cmd := req.NetNS.Command(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &raw, &raw
	runErr := cmd.Start()
	if runErr == nil {
		req.MarkStarted()
		runErr = cmd.Wait()
	}
	res, err := loadgen.ReadResultFile(out)
	if runErr != nil {
		// a partial result is still returned, to be archived: the step is
		// invalid, but what was measured is kept
		return res, raw.Bytes(), fmt.Errorf("load generator: %v: %s", runErr, orchestrator.LastLine(raw.String()))
	}
	if err != nil {
		return nil, raw.Bytes(), err
	}
	return res, raw.Bytes(), nil
}
