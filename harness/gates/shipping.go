package gates

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

// ShippingGate compares what ran with what the step declared. With
// shipping off no agent binary may have been seen on the node at any look
// during the load, and the node must have been looked at; with shipping on
// an agent task must have run, or the step measured a quieter node than the
// sweep's other steps. agentErr is a failure to read the agent's tasks.
func ShippingGate(rec results.Shipping, agentErr error) results.Gate {
	g := results.Gate{Name: Shipping}
	switch {
	case rec.Undeclared:
		g.NotChecked, g.Detail = true, "the spec sets no shipping and this cluster has no node agent"
	case rec.Mode == experiment.ShippingOff && len(rec.Processes) > 0:
		g.Detail = fmt.Sprintf("shipping = \"off\" was declared, but %s ran on the node during the load", strings.Join(rec.Processes, ", "))
	case rec.Mode == experiment.ShippingOff && rec.ProcessError != "":
		g.Detail = fmt.Sprintf("shipping = \"off\": whether an agent ran could not be seen (%d looks succeeded): %s", rec.ProcessLooks, rec.ProcessError)
	case rec.Mode == experiment.ShippingOff && rec.ProcessLooks == 0:
		g.Detail = "shipping = \"off\": the node's processes were never looked at during the load"
	case rec.Mode == experiment.ShippingOff:
		g.Passed, g.Detail = true, fmt.Sprintf("no node agent ran during the load (%d looks at the node's processes, one a second)", rec.ProcessLooks)
	case agentErr != nil:
		g.Detail = fmt.Sprintf("shipping = \"on\": the node agent's tasks could not be read: %v", agentErr)
	case len(rec.Tasks) == 0:
		g.Detail = "shipping = \"on\", but no node agent task ran during the load (cluster-up deploys it: nomad job status orchbench-agent)"
	default:
		g.Passed, g.Detail = true, rec.String()
	}
	return g
}
