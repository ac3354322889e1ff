package orchestrator

// Node-level fault kinds: they act on a machine of the cluster (through
// harness/nodes), not on one instance through the orchestrator, so the
// adapters' InjectFault never sees them; the sweep injects them and the
// orchestrator under test is only watched.
const (
	// FaultKillNode stops a worker at once, with everything on it: by
	// default the one running an instance of the fault's service.
	FaultKillNode FaultKind = "kill-node"
	// FaultPartitionNode drops every packet of a node for the fault's
	// duration, then lets them through again.
	FaultPartitionNode FaultKind = "partition-node"
	// FaultKillLeader stops the node holding the leadership of the
	// orchestrator under test (Nomad's raft leader, Swarm's leader
	// manager).
	FaultKillLeader FaultKind = "kill-leader"
	// FaultRestartAgent restarts one agent (Consul, Nomad's client, the
	// kubelet) on a worker.
	FaultRestartAgent FaultKind = "restart-agent"
)

// NodeLevel reports whether the kind acts on a node rather than on an
// instance.
func (k FaultKind) NodeLevel() bool {
	switch k {
	case FaultKillNode, FaultPartitionNode, FaultKillLeader, FaultRestartAgent:
		return true
	}
	return false
}

// KillsNode reports whether the kind leaves a node down.
func (k FaultKind) KillsNode() bool { return k == FaultKillNode || k == FaultKillLeader }
