package sweep

import (
	"context"
	"time"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// settleWindow is how long each read of the tasks' CPU before a load
// spans: three CFS periods, enough to see a task at its quota, and little
// added to every step.
const settleWindow = 300 * time.Millisecond

// DefaultSettleBound bounds the wait for an application to finish the work
// a step before it left (Runner.SettleBound).
const DefaultSettleBound = 2 * time.Minute

// settle waits until every task of the application is idle (gates.Idle),
// reading their CPU over windows of settleWindow, for at most bound, and
// judges the last window.
func (r *Runner) settle(ctx context.Context, lims []orchestrator.Limits) results.Gate {
	bound := r.SettleBound
	if bound <= 0 {
		bound = DefaultSettleBound
	}
	began := time.Now()
	before := r.readUsages(ctx, lims)
	for {
		select {
		case <-ctx.Done():
			return results.Gate{Name: gates.Idle, Detail: "interrupted while waiting for the application to settle: " + ctx.Err().Error()}
		case <-time.After(settleWindow):
		}
		after := r.readUsages(ctx, lims)
		window := taskUses(lims, before, after)
		waited := time.Since(began) - settleWindow
		if g := gates.IdleGate(window, waited, bound); g.Passed || g.NotChecked || waited >= bound {
			return gates.IdleGate(window, waited, bound)
		}
		before = after
	}
}

// readUsages reads each task's cgroup on its node; a task that cannot be
// read (restarted, no cgroup) has the zero Usage.
func (r *Runner) readUsages(ctx context.Context, lims []orchestrator.Limits) []limits.Usage {
	out := make([]limits.Usage, len(lims))
	for i, l := range lims {
		if l.CgroupPath == "" {
			continue
		}
		if u, err := r.Nodes.Node(l.Node).Usage(ctx, l.CgroupPath); err == nil {
			out[i] = u
		}
	}
	return out
}

// taskUses is each task's CPU between two reads, for the tasks read both
// times.
func taskUses(lims []orchestrator.Limits, before, after []limits.Usage) []gates.TaskUse {
	var out []gates.TaskUse
	for i, l := range lims {
		if before[i].At.IsZero() || after[i].At.IsZero() || !after[i].At.After(before[i].At) {
			continue
		}
		cores, _ := before[i].Between(after[i])
		out = append(out, gates.TaskUse{Task: l.Task + " " + orchestrator.ShortID(l.ID), Cores: cores, Declared: l.Declared.WeighedCores()})
	}
	return out
}
