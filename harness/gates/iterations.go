package gates

import (
	"fmt"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/results"
)

// IterationsGate accepts an iterations run only when every user finished
// its loops before the step's bound: threads × loops × sequence requests
// sent, each accounted for.
func IterationsGate(res *loadgen.Result, runErr error, st experiment.Step, runner string) results.Gate {
	g := results.Gate{Name: Load}
	want := int64(st.Users) * int64(st.Load.Iterations.PerUser())
	switch {
	case runErr != nil:
		g.Detail = runErr.Error()
	case res == nil:
		g.Detail = "the load generator left no result"
	case res.Interrupted:
		g.Detail = fmt.Sprintf("the load generator was interrupted after %.1f s", res.WallSeconds)
	case res.Accounting.Due < want:
		g.Detail = fmt.Sprintf("only %d of the %d requests (%d threads × %d loops × %d requests) were sent within the %s bound: the users did not finish",
			res.Accounting.Due, want, st.Users, st.Load.Iterations.Loops, len(st.Load.Iterations.Requests), st.Duration)
	case res.Accounting.Due > want:
		g.Detail = fmt.Sprintf("%d requests were sent, more than the %d declared", res.Accounting.Due, want)
	case !res.Accounting.Balanced():
		g.Detail = "requests unaccounted for: " + res.Accounting.String()
	default:
		g.Passed = true
		g.Detail = fmt.Sprintf("%d threads × %d loops × %d requests in %.1f s by the %s load runner; %s", st.Users, st.Load.Iterations.Loops,
			len(st.Load.Iterations.Requests), res.WallSeconds, runner, res.Accounting)
	}
	return g
}
