package main

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/sweep"
)

// passes replays one summary per pass, as a runner measuring again what
// came out invalid would.
type passes struct {
	sums []sweep.Summary
	errs []error
	ran  int
}

func (p *passes) Run(context.Context, *results.SweepRecord) (sweep.Summary, error) {
	i := p.ran
	p.ran++
	var err error
	if i < len(p.errs) {
		err = p.errs[i]
	}
	return p.sums[i], err
}

func TestRetryInvalidRunsInvalidStepsAgain(t *testing.T) {
	rec := &results.SweepRecord{ID: "s"}
	ctx := context.Background()

	// two invalid steps, one still invalid on the second pass, none on the third
	p := &passes{sums: []sweep.Summary{{Steps: 9, Valid: 7, Invalid: 2}, {Steps: 2, Valid: 1, Invalid: 1, Rerun: 2}, {Steps: 1, Valid: 1, Rerun: 1}}}
	var out strings.Builder
	sum, retried, err := runWithRetries(ctx, p, rec, 3, &out)
	if err != nil || p.ran != 3 || sum.Invalid != 0 || sum.Valid != 9 || sum.Steps != 12 || retried != 3 {
		t.Fatalf("passes %d, sum %+v, retried %d, err %v", p.ran, sum, retried, err)
	}
	if !strings.Contains(out.String(), "2 invalid steps run again (pass 1 of 3") {
		t.Errorf("output %q", out.String())
	}

	// without the flag: one pass, the invalid step stays invalid
	p = &passes{sums: []sweep.Summary{{Steps: 9, Valid: 8, Invalid: 1}}}
	sum, retried, _ = runWithRetries(ctx, p, rec, 0, io.Discard)
	if p.ran != 1 || sum.Invalid != 1 || retried != 0 {
		t.Fatalf("retries 0: passes %d, sum %+v, retried %d", p.ran, sum, retried)
	}

	// the passes are bounded: still invalid after them is reported invalid
	p = &passes{sums: []sweep.Summary{{Steps: 3, Invalid: 3}, {Steps: 3, Invalid: 3}, {Steps: 3, Invalid: 3}}}
	sum, _, _ = runWithRetries(ctx, p, rec, 2, io.Discard)
	if p.ran != 3 || sum.Invalid != 3 {
		t.Fatalf("bounded: passes %d, sum %+v", p.ran, sum)
	}

	// a pass that fails ends the retries with its error
	boom := errors.New("archive full")
	p = &passes{sums: []sweep.Summary{{Steps: 2, Invalid: 1}, {}}, errs: []error{nil, boom}}
	if _, _, err := runWithRetries(ctx, p, rec, 5, io.Discard); !errors.Is(err, boom) || p.ran != 2 {
		t.Fatalf("error: %v after %d passes", err, p.ran)
	}
}

func TestRetryInvalidRefusesANegativeCount(t *testing.T) {
	dir := t.TempDir()
	cmd := &cobra.Command{}
	cmd.SetOut(io.Discard)
	err := runSweep(cmd, sweepFlags{file: "experiments/demo.hcl", dir: dir, retryInvalid: -1})
	if err == nil || !strings.Contains(err.Error(), "--retry-invalid -1") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused flag left %d entries in the archive", len(entries))
	}
}
