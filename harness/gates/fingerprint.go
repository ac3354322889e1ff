package gates

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// Fingerprint is every running instance of a deployment's jobs with its
// restart count, read just before a load and again after it: what the
// orchestrator says now, which no lost or unreadable event can hide.
type Fingerprint map[InstanceKey]orchestrator.Instance

// InstanceKey tells instances apart: a Nomad allocation runs several tasks
// under one ID.
type InstanceKey struct{ ID, Task string }

// instanceChange is one difference between two fingerprints.
type instanceChange struct {
	orchestrator.Instance
	What string
}

func (c instanceChange) String() string { return c.Label() + " " + c.What }

// addedOrRemoved reports an instance that came or went, not one that
// restarted in place.
func (c instanceChange) addedOrRemoved() bool {
	return c.What == "is gone" || strings.HasPrefix(c.What, "is new")
}

// fingerprintChanges lists, in a stable order, every instance gone, new,
// or restarted between before and after.
func fingerprintChanges(before, after Fingerprint) []instanceChange {
	var out []instanceChange
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			out = append(out, instanceChange{b, "is gone"})
		case a.Restarts != b.Restarts:
			out = append(out, instanceChange{a, fmt.Sprintf("restarted: %d restarts before the load, %d after", b.Restarts, a.Restarts)})
		}
	}
	for k, a := range after {
		if _, ok := before[k]; !ok {
			out = append(out, instanceChange{a, fmt.Sprintf("is new (%d restarts)", a.Restarts)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// explainedByFault reports whether the step's injected fault accounts for a
// change of this instance, by the rule the fault's events are excused by.
func explainedByFault(f *results.FaultRecord, in orchestrator.Instance) bool {
	return f != nil && !f.At.IsZero() && f.Error == "" && faultHit(f, in.ID, in.Group)
}
