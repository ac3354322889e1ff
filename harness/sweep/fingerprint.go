package sweep

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/gates"
)

// takeFingerprint reads the running instances of every job of the deployment.
func takeFingerprint(ctx context.Context, dep *deployment) (gates.Fingerprint, error) {
	fp := gates.Fingerprint{}
	for _, d := range dep.jobs {
		ins, err := dep.orch.Instances(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("instances of %s: %w", d.Job, err)
		}
		for _, in := range ins {
			fp[gates.InstanceKey{ID: in.ID, Task: in.Task}] = in
		}
	}
	return fp, nil
}
