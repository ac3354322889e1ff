package sweep

import (
	"context"
	"errors"
	"testing"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// instancesOnly answers Instances per job; the rest of the contract is not
// used by a fingerprint.
type instancesOnly struct {
	orchestrator.Orchestrator
	byJob map[string][]orchestrator.Instance
	err   error
}

func (o instancesOnly) Instances(_ context.Context, d *orchestrator.Deployment) ([]orchestrator.Instance, error) {
	if o.err != nil && d.Job == "sn-db" {
		return nil, o.err
	}
	return o.byJob[d.Job], nil
}

func TestTakeFingerprintCoversEveryJob(t *testing.T) {
	o := instancesOnly{byJob: map[string][]orchestrator.Instance{
		// one Nomad allocation runs the app and its sidecar under one ID
		"sn":    {{ID: "a1", Group: "app", Task: "app"}, {ID: "a1", Group: "app", Task: "envoy", Restarts: 1}},
		"sn-db": {{ID: "d1", Group: "db", Task: "mongo"}},
	}}
	dep := &deployment{orch: o, jobs: []*orchestrator.Deployment{{Job: "sn"}, {Job: "sn-db"}}}
	fp, err := takeFingerprint(context.Background(), dep)
	if err != nil || len(fp) != 3 || fp[gates.InstanceKey{ID: "a1", Task: "envoy"}].Restarts != 1 || fp[gates.InstanceKey{ID: "d1", Task: "mongo"}].Group != "db" {
		t.Fatalf("fingerprint %+v, %v", fp, err)
	}
	o.err = errors.New("503")
	dep.orch = o
	if _, err := takeFingerprint(context.Background(), dep); err == nil || err.Error() != "instances of sn-db: 503" {
		t.Fatalf("error %v, want it to name the job", err)
	}
}
