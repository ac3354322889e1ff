package workload

import "github.com/orchbench/orchbench/harness/loadgen"

// Registered as "social-network" so `orchbench load -w social-network:mixed@962`
// and an experiment's workload = "social-network:mixed@962" find it.
func init() {
	loadgen.RegisterWorkload("social-network", func(spec string) (loadgen.Workload, error) {
		w, err := FromSpec(spec)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return w, nil
	})
}
