package workload

import "github.com/orchbench/orchbench/harness/loadgen"

// Registered as "voting": `orchbench load -w voting:study-001` and an
// experiment's workload = "voting:study-001" find it.
func init() {
	loadgen.RegisterWorkload("voting", func(spec string) (loadgen.Workload, error) {
		w, err := FromSpec(spec)
		if err != nil {
			return nil, err // a nil interface, not a nil *Study001 in one
		}
		return w, nil
	})
}
