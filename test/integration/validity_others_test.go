//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/test/wrongsetup"
)

// TestEveryGateCanFailOnSwarm runs TestEveryGateCanFail's sweep with
// wrongsetup.Elsewhere on Swarm: a gate that fails on Nomad must fail there
// too. TestKubernetes runs the same rows while its cluster is up.
func TestEveryGateCanFailOnSwarm(t *testing.T) {
	runWrongSetups(t, "swarm", append(append([]wrongsetup.Row{}, wrongsetup.Elsewhere...), wrongsetup.ToolEntrySwarm))
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
