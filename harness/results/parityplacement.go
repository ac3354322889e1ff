package results

import "fmt"

// placementCounts says, per group/task, on how many nodes its instances
// ran ("on 3 nodes"): the same variant on two orchestrators with a
// different count was placed differently, so it did not run the same
// experiment (one instance per worker against all on one share different
// links and different CPUs). Records archived before instances carried
// their node give no row.
func placementCounts(lims []parityLimits) map[string]string {
	nodes := map[string]map[string]bool{}
	for _, l := range lims {
		if l.Node == "" {
			continue
		}
		name := l.Group + "/" + l.Task
		if nodes[name] == nil {
			nodes[name] = map[string]bool{}
		}
		nodes[name][l.Node] = true
	}
	out := map[string]string{}
	for name, set := range nodes {
		if len(set) == 1 {
			out[name] = "on 1 node"
		} else {
			out[name] = fmt.Sprintf("on %d nodes", len(set))
		}
	}
	return out
}
