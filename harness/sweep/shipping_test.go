package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/results"
)

func TestShippingGate(t *testing.T) {
	agentTask := []results.TaskCPU{{Task: "otelcol", Cores: 0.04}}
	cases := []struct {
		name   string
		rec    results.Shipping
		err    error
		passed bool
		detail string
	}{
		{"off and quiet", results.Shipping{Mode: "off"}, nil, true, "no node agent ran"},
		{"off but the agent ran", results.Shipping{Mode: "off", Processes: []string{"otelcol-orchbench (pid 42)"}}, nil, false,
			`shipping = "off" was declared, but otelcol-orchbench (pid 42) ran`},
		// an agent someone started by hand is shipping as much as ours
		{"off but a stray vector ran", results.Shipping{Mode: "off", Processes: []string{"vector (pid 7)"}}, nil, false, "vector (pid 7)"},
		{"on and running", results.Shipping{Mode: "on", Agent: "orchbench-agent", Cores: 0.04, Tasks: agentTask}, nil, true, "agent 0.040 cores"},
		{"on but no agent task", results.Shipping{Mode: "on"}, nil, false, "no node agent task ran"},
		// a process without a Nomad task is not the agent whose cost is measured
		{"on, only a stray process", results.Shipping{Mode: "on", Processes: []string{"vector (pid 7)"}}, nil, false, "no node agent task ran"},
		{"unset, no agent on the cluster", results.Shipping{Mode: "on", Undeclared: true}, nil, false, "sets no shipping"},
		{"on, unreadable", results.Shipping{Mode: "on"}, errors.New("no cgroup"), false, "could not be read: no cgroup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := ShippingGate(c.rec, c.err)
			if g.Name != GateShipping || g.Passed != c.passed || g.NotChecked != c.rec.Undeclared || !strings.Contains(g.Detail, c.detail) {
				t.Errorf("gate = %+v, want passed=%v with %q", g, c.passed, c.detail)
			}
		})
	}
}

func TestAgentProcessesFindsAgentsByExecutable(t *testing.T) {
	old := limits.ProcRoot
	t.Cleanup(func() { limits.ProcRoot = old })
	limits.ProcRoot = t.TempDir()
	procs := map[string]string{
		"101":  ".tools/bin/otelcol-orchbench",
		"102":  "/usr/bin/vector (deleted)", // replaced on disk while it runs
		"103":  "/usr/bin/node",
		"104":  "/usr/local/bin/vectorizer", // a name that merely starts alike
		"self": "/usr/bin/vector",           // not a pid
	}
	for pid, exe := range procs {
		dir := filepath.Join(limits.ProcRoot, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(exe, filepath.Join(dir, "exe")); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(agentProcesses(), ", ")
	if got != "otelcol-orchbench (pid 101), vector (pid 102)" {
		t.Errorf("agent processes = %q", got)
	}
}
