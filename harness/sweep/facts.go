package sweep

import (
	"context"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// factsOf is what the orchestrator says of its nodes, with each node's
// machine facts (OS, CPU model and frequency) as its own probe reads them
// on the node. Swarm and Kubernetes have no fingerprint of these, and
// their adapters can only read the machine they run on: on emulated nodes,
// whose system is the node image's, or on real hosts, that attributed the
// harness's machine to every node, and the parity table flagged an OS
// version Nomad read on the node itself. A node whose probe does not
// answer keeps the adapter's facts.
func (r *Runner) factsOf(ctx context.Context, o orchestrator.Orchestrator) (orchestrator.Facts, error) {
	facts, err := o.Facts(ctx)
	if err != nil {
		return facts, err
	}
	for name, f := range facts {
		own, err := r.Nodes.Node(name).Facts(ctx)
		if err != nil {
			continue
		}
		if f == nil {
			f = map[string]string{}
			facts[name] = f
		}
		for k, v := range own {
			f[k] = v
		}
	}
	return facts, nil
}
