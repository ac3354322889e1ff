//go:build integration

package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/results"
)

// The wrong setups that need no exec driver (so no faulty server), on the
// orchestrators whose adapters translate the pack: Taewa's /?n=0 is the
// fast server, and its baseline at one core keeps up with what a starved
// generator can send.
var wrongSetupsElsewhere = []wrongSetup{
	{"little", taewaBlock("baseline", "taewa-little", "resource_scale = 0.25", "rates = [2000]\n    threads = 1\n    connections = 1"),
		results.OutcomeInvalid, "little", "1 connections at the unloaded latency of"},
	// 0.05 core sends ~2500 requests a second; 4000 are due
	{"starved", taewaBlock("baseline", "taewa-starved", "resource_scale = 1", "path = \"/?n=0\"\n    rates = [4000]\n    threads = 2\n    connections = 64\n    generator_cores = 0.05"),
		results.OutcomeInvalid, "generator", "generator saturated"},
	{"closed-starved", taewaBlock("baseline", "taewa-closed-starved", "resource_scale = 1", "path = \"/?n=0\"\n    generator_cores = 0.05\n    closed_loop {\n      users = 32\n    }"),
		results.OutcomeInvalid, "generator", "the latency it reports is distorted"},
}

// On Swarm each instance has a port of its own, so a tool that takes one
// URL would load one of them; behind a Kubernetes node port it may.
var toolEntrySwarm = wrongSetup{"tool-entry", taewaBlock("horizontal", "taewa-fortio-two", "resource_scale = 0.25", "runner = \"fortio\"\n    closed_loop {\n      users = 4\n    }"),
	results.OutcomeInvalid, "tool-entry", "fortio takes one URL, but the service has 2 instances"}

// TestEveryGateCanFailOnSwarmAndKubernetes runs TestEveryGateCanFail's
// sweep with the rows above on Swarm, then on Kubernetes (brought up for
// it and down after): a gate that fails on Nomad must fail on them too.
func TestEveryGateCanFailOnSwarmAndKubernetes(t *testing.T) {
	t.Run("swarm", func(t *testing.T) {
		runWrongSetups(t, "swarm", append(append([]wrongSetup{}, wrongSetupsElsewhere...), toolEntrySwarm))
	})
	t.Run("kubernetes", func(t *testing.T) {
		k8s := filepath.Join(root, "cluster", "kubernetes.sh")
		must(t, k8s, "up")
		t.Cleanup(func() { sh(root, k8s, "down") })
		runWrongSetups(t, "kubernetes", wrongSetupsElsewhere)
	})
}

func runWrongSetups(t *testing.T, orch string, rows []wrongSetup) {
	work := t.TempDir()
	name := "validity-" + orch
	spec := filepath.Join(work, name+".hcl")
	if err := os.WriteFile(spec, []byte(validitySpec(name, orch, rows, strings.NewReplacer())), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "results")
	out := must(t, orchbench, "sweep", "-f", spec, "--dir", dir, "--reports", filepath.Join(work, "reports"), "--vm", "")
	t.Cleanup(func() {
		for _, c := range rows {
			sh(root, orchbench, "pack", "destroy", "taewa", "--orchestrator", orch, "--var", "job_name="+jobOf(c))
		}
	})
	if t.Failed() {
		t.Log(out)
	}
	checkWrongSetups(t, dir, name, rows, strings.NewReplacer())
}

// jobOf is the job_name a row's block deploys.
func jobOf(c wrongSetup) string {
	_, rest, _ := strings.Cut(c.block, "job_name = \"")
	job, _, _ := strings.Cut(rest, "\"")
	return job
}

// stopsBeforeLoad are the gates whose failure ends a step before any load,
// so it archives no accounting.
var stopsBeforeLoad = map[string]bool{"limits": true, "little": true, "tool-entry": true}

// checkWrongSetups reads the sweep's archive and holds every step to its
// row: the outcome, the gate that failed and what its detail names (after
// fill). Every step that ran load must have archived balanced accounting.
func checkWrongSetups(t *testing.T, dir, sweep string, rows []wrongSetup, fill *strings.Replacer) []results.StepResult {
	t.Helper()
	archive := results.Archive{Dir: dir}
	id, err := archive.Resolve(sweep)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := archive.LoadSteps(id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]wrongSetup{}
	for _, c := range rows {
		c.detail = fill.Replace(c.detail)
		want[c.app] = c
	}
	if len(steps) != len(want) {
		t.Fatalf("archived %d steps, want %d", len(steps), len(want))
	}
	for _, s := range steps {
		w, ok := want[s.App]
		if !ok {
			t.Errorf("unexpected step %s", s.Step)
			continue
		}
		var failed *results.Gate
		for i, g := range s.Gates {
			if g.Name == w.gate && !g.Passed && !g.NotChecked {
				failed = &s.Gates[i]
			}
		}
		switch {
		case s.Outcome != w.want:
			t.Errorf("%s on %s: outcome %s %v, want %s by the %s gate; gates %+v", s.App, s.Orchestrator, s.Outcome, s.Reasons, w.want, w.gate, s.Gates)
		case failed == nil:
			t.Errorf("%s on %s: the %s gate did not fail: %+v", s.App, s.Orchestrator, w.gate, s.Gates)
		case !strings.Contains(failed.Detail, w.detail):
			t.Errorf("%s on %s: %s gate says %q, want it to name %q", s.App, s.Orchestrator, w.gate, failed.Detail, w.detail)
		default:
			t.Logf("%s on %s: %s, %s: %s", s.App, s.Orchestrator, s.Outcome, failed.Name, failed.Detail)
		}
		switch {
		case s.Accounting != nil && !s.Accounting.Balanced():
			t.Errorf("%s: due != completed + errors + timeouts + unsent: %+v", s.App, *s.Accounting)
		case s.Accounting == nil && s.App != "killed" && !stopsBeforeLoad[w.gate]:
			t.Errorf("%s: no accounting archived", s.App)
		}
	}
	return steps
}
