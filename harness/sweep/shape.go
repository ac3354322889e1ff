package sweep

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// checkShapes refuses the sweep before its first step when a step's ha
// asks for a control plane of another size than the one running: an HA-on
// measurement on one server (or the reverse) would be labelled with a
// shape it did not have. The size is what each orchestrator reports of
// itself; the embedded single node is one server whatever it runs.
func (r *Runner) checkShapes(ctx context.Context, plan []experiment.Step) error {
	seen := map[string]bool{}
	for _, st := range plan {
		if st.HA == "" || seen[st.Orchestrator+"/"+st.HA] {
			continue
		}
		seen[st.Orchestrator+"/"+st.HA] = true
		have, err := r.servers(ctx, r.Orchestrators[st.Orchestrator])
		if err != nil {
			return fmt.Errorf("step %s needs ha = %q: %w", st.ID, st.HA, err)
		}
		if err := shapeMismatch(st, have, r.cluster()); err != nil {
			return err
		}
	}
	return nil
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

// shapeMismatch says what was found and the command that brings the shape
// the step needs.
func shapeMismatch(st experiment.Step, have int, c nodes.Controller) error {
	want := experiment.HAServers[st.HA]
	if have == want {
		return nil
	}
	found := fmt.Sprintf("%s runs %s on %s", st.Orchestrator, serverCount(have), c.Describe())
	if _, single := c.(nodes.SingleNode); single {
		return fmt.Errorf("step %s needs ha = %q (%s), but %s, which is ha = \"off\": bring up an emulated cluster (just nodes-up nodes=4 servers=%d) and run with NODES_NAME set", st.ID, st.HA, serverCount(want), found, want)
	}
	return fmt.Errorf("step %s needs ha = %q (%s), but %s: bring up that shape (just nodes-down, then just nodes-up nodes=4 servers=%d)", st.ID, st.HA, serverCount(want), found, want)
}

func serverCount(n int) string {
	if n == 1 {
		return "1 server"
	}
	return fmt.Sprintf("%d servers", n)
}
