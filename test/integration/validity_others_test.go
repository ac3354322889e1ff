//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/test/wrongsetup"
)

// TestEveryGateCanFailOnSwarmAndKubernetes runs TestEveryGateCanFail's
// sweep with wrongsetup.Elsewhere on Swarm, then on Kubernetes (brought up for
// it and down after): a gate that fails on Nomad must fail on them too.
func TestEveryGateCanFailOnSwarmAndKubernetes(t *testing.T) {
	t.Run("swarm", func(t *testing.T) {
		runWrongSetups(t, "swarm", append(append([]wrongsetup.Row{}, wrongsetup.Elsewhere...), wrongsetup.ToolEntrySwarm))
	})
	t.Run("kubernetes", func(t *testing.T) {
		k8s := filepath.Join(root, "cluster", "kubernetes.sh")
		must(t, k8s, "up")
		t.Cleanup(func() { sh(root, k8s, "down") })
		runWrongSetups(t, "kubernetes", wrongsetup.Elsewhere)
	})
}

func runWrongSetups(t *testing.T, orch string, rows []wrongsetup.Row) {
	work := t.TempDir()
	name := "validity-" + orch
	spec := filepath.Join(work, name+".hcl")
	if err := os.WriteFile(spec, []byte(wrongsetup.Spec(name, orch, rows, strings.NewReplacer())), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "results")
	out := must(t, orchbench, "sweep", "-f", spec, "--dir", dir, "--reports", filepath.Join(work, "reports"), "--vm", "")
	t.Cleanup(func() {
		for _, c := range rows {
			sh(root, orchbench, "pack", "destroy", "taewa", "--orchestrator", orch, "--var", "job_name="+wrongsetup.JobOf(c))
		}
	})
	if t.Failed() {
		t.Log(out)
	}
	wrongsetup.Check(t, dir, name, rows, strings.NewReplacer())
}
