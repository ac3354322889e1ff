package workload

import "github.com/orchbench/orchbench/harness/loadgen"

// Registered as "media-microservices" so `orchbench load -w
// media-microservices:compose-review` and an experiment's workload =
// "media-microservices:compose-review" find it.
func init() {
	loadgen.RegisterWorkload("media-microservices", func(spec string) (loadgen.Workload, error) {
		w, err := FromSpec(spec)
		if err != nil {
			return nil, err // a nil interface, not a nil *MediaMicroservices in one
		}
		return w, nil
	})
}
