package experiment

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// nodeFault reads and checks a fault block's node-level attributes (node,
// agent, duration): each kind takes only those it uses, so a spec that
// says more than the fault will do fails here rather than being quietly
// ignored.
func (p *parser) nodeFault(b *hcl.Block, a hcl.Attributes, f *Fault) {
	where := b.DefRange
	if k, ok := a["kind"]; ok {
		where = k.Expr.Range()
	}
	refuse := func(name, why string) {
		if attr, ok := a[name]; ok {
			p.errorf(attr.Expr.Range(), "Invalid fault "+name, "%s %s", f.Kind, why)
		}
	}
	if p.decode(a, "node", &f.Node) && f.Node == "" {
		p.errorf(a["node"].Expr.Range(), "Invalid fault node", "node is empty; leave it out for the worker that runs an instance of the service")
	}
	p.decode(a, "agent", &f.Agent)
	f.Duration = p.duration(a, "duration", false)
	if !f.Kind.NodeLevel() {
		for _, name := range []string{"node", "agent", "duration"} {
			refuse(name, "acts on one instance through the orchestrator; "+name+" is for the node-level kinds (kill-node, partition-node, kill-leader, restart-agent)")
		}
		return
	}
	if p.opts.SingleNode {
		p.errorf(where, "Node fault on a single-node cluster", "%s needs a cluster of several nodes: %v", f.Kind, nodes.ErrSingleNode)
	}
	switch f.Kind {
	case orchestrator.FaultPartitionNode:
		if _, ok := a["duration"]; !ok {
			p.errorf(where, "Missing fault duration", "partition-node needs duration = \"30s\": how long the node stays cut off")
		}
		refuse("agent", "takes no agent")
	case orchestrator.FaultKillNode:
		refuse("agent", "takes no agent")
	case orchestrator.FaultKillLeader:
		refuse("agent", "takes no agent")
		refuse("node", "acts on the node holding the leadership when it is injected; no node can be named")
	case orchestrator.FaultRestartAgent:
		refuse("duration", "restarts the agent at once; it takes no duration")
		if _, ok := a["agent"]; !ok {
			p.errorf(where, "Missing fault agent", "restart-agent needs agent = one of %s", nodes.AgentList())
		} else if _, err := nodes.ParseAgent(f.Agent); err != nil {
			p.errorf(a["agent"].Expr.Range(), "Unknown agent", "%v", err)
		}
	}
	if d, ok := a["duration"]; ok && f.Duration <= 0 {
		p.errorf(d.Expr.Range(), "Invalid fault duration", "duration must be above 0")
	}
}
