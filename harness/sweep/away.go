package sweep

import (
	"sync"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// awayNodes are the nodes the running step's own node fault took away
// (killed, cut off): a read of them that fails is what the fault does, not
// a gate that could not see. A read that succeeds still counts.
type awayNodes struct {
	mu    sync.Mutex
	names map[string]bool
}

// mark records that the step's fault took node away.
func (a *awayNodes) mark(node string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.names == nil {
		a.names = map[string]bool{}
	}
	a.names[node] = true
}

// has reports whether the step's fault took node away.
func (a *awayNodes) has(node string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.names[node]
}

// reset forgets the previous step's fault.
func (a *awayNodes) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.names = nil
}

// takesNodeAway reports whether a node-level kind leaves its node unreachable.
func takesNodeAway(k orchestrator.FaultKind) bool {
	return k.KillsNode() || k == orchestrator.FaultPartitionNode
}
