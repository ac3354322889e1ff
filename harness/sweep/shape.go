package sweep

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// checkShapes refuses the sweep before its first step when a step's ha
// asks for a control plane of another size than the one running: an HA-on
// measurement on one server (or the reverse) would be labelled with a
// shape it did not have. The size is what each orchestrator reports of
// itself; the embedded single node is one server whatever it runs.
func (r *Runner) checkShapes(ctx context.Context, plan []experiment.Step) error {
	other, err := r.otherShape(ctx, plan)
	if err != nil {
		return err
	}
	for _, st := range plan {
		if e := other[st.ID]; e != nil {
			return e
		}
	}
	return nil
}

// otherShape gives, for every step whose ha differs from the running
// control plane, why it cannot run here. A spec may hold both shapes (an
// app's ha): the sweep runs the steps of the shape that runs and leaves
// the others unarchived, so that `sweep --resume` on the other shape
// finishes the same sweep (docs/faults.md says why it does not re-shape
// the cluster itself). An error is a size that could not be read.
func (r *Runner) otherShape(ctx context.Context, plan []experiment.Step) (map[string]error, error) {
	size := map[string]int{}
	out := map[string]error{}
	for _, st := range plan {
		if st.HA == "" {
			continue
		}
		have, asked := size[st.Orchestrator]
		if !asked {
			var err error
			if have, err = r.servers(ctx, r.Orchestrators[st.Orchestrator]); err != nil {
				return nil, fmt.Errorf("step %s needs ha = %q%s: %w", st.ID, st.HA, atLine(st), err)
			}
			size[st.Orchestrator] = have
		}
		if err := shapeMismatch(st, have, r.cluster()); err != nil {
			out[st.ID] = err
		}
	}
	return out, nil
}

// servers is the control plane's size as the orchestrator reports it.
func (r *Runner) servers(ctx context.Context, o orchestrator.Orchestrator) (int, error) {
	if s, ok := o.(orchestrator.ControlPlaneShape); ok {
		n, err := s.ControlPlaneServers(ctx)
		if err != nil {
			return 0, fmt.Errorf("the size of %s's control plane: %w", o.Name(), err)
		}
		return n, nil
	}
	if _, single := r.cluster().(nodes.SingleNode); single {
		return 1, nil
	}
	return 0, fmt.Errorf("%s does not report the size of its control plane on %s, so the shape cannot be checked", o.Name(), r.cluster().Describe())
}

// shapeMismatch says what was found, the spec line that asks for the
// shape, and the command that brings it.
func shapeMismatch(st experiment.Step, have int, c nodes.Controller) error {
	want := experiment.HAServers[st.HA]
	if have == want {
		return nil
	}
	found := fmt.Sprintf("%s runs %s on %s", st.Orchestrator, serverCount(have), c.Describe())
	if _, single := c.(nodes.SingleNode); single {
		return fmt.Errorf("step %s needs ha = %q (%s)%s, but %s, which is ha = \"off\": bring up an emulated cluster (just nodes-up nodes=4 servers=%d) and run with NODES_NAME set", st.ID, st.HA, serverCount(want), atLine(st), found, want)
	}
	return fmt.Errorf("step %s needs ha = %q (%s)%s, but %s: bring up that shape (just nodes-down, then just nodes-up nodes=4 servers=%d)", st.ID, st.HA, serverCount(want), atLine(st), found, want)
}

// atLine names the spec line that set a step's shape, when known.
func atLine(st experiment.Step) string {
	if st.HAAt == "" {
		return ""
	}
	return " at " + st.HAAt
}

func serverCount(n int) string {
	if n == 1 {
		return "1 server"
	}
	return fmt.Sprintf("%d servers", n)
}

// deferOtherShape picks the steps still to run that need the other shape
// and says so before the first step; when no step still to run fits the
// running shape, the sweep is refused with the first one's reason.
func (r *Runner) deferOtherShape(ctx context.Context, rec *results.SweepRecord, done map[string]bool) (map[string]bool, error) {
	var todo []experiment.Step
	for _, st := range rec.Plan {
		if !done[st.ID] {
			todo = append(todo, st)
		}
	}
	other, err := r.otherShape(ctx, todo)
	if err != nil || len(other) == 0 {
		return nil, err
	}
	if len(other) == len(todo) {
		return nil, other[todo[0].ID]
	}
	deferred := map[string]bool{}
	count := map[string]int{}
	first := map[string]error{}
	var order []string
	for _, st := range todo {
		e := other[st.ID]
		if e == nil {
			continue
		}
		deferred[st.ID] = true
		why := fmt.Sprintf("ha = %q%s", st.HA, atLine(st))
		if count[why] == 0 {
			order = append(order, why)
			first[why] = e
		}
		count[why]++
	}
	for _, why := range order {
		fmt.Fprintf(r.Out, "%d steps need %s, not the shape running; they are left for `orchbench sweep --resume %s` once that shape runs (%v)\n",
			count[why], why, rec.ID, first[why])
	}
	return deferred, nil
}
