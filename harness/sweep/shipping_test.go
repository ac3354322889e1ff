package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
		{"off and quiet", results.Shipping{Mode: "off", ProcessLooks: 31}, nil, true, "no node agent ran during the load (31 looks at the node's processes, one a second)"},
		// nothing seen because nothing was looked at is no pass
		{"off, never looked", results.Shipping{Mode: "off"}, nil, false, `shipping = "off": the node's processes were never looked at`},
		{"off, /proc unreadable", results.Shipping{Mode: "off", ProcessLooks: 3, ProcessError: "the node's processes: permission denied"}, nil, false,
			`whether an agent ran could not be seen (3 looks succeeded): the node's processes: permission denied`},
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
	agents, err := agentProcesses()
	if got := strings.Join(agents, ", "); err != nil || got != "otelcol-orchbench (pid 101), vector (pid 102)" {
		t.Errorf("agent processes = %q, %v", got, err)
	}
	limits.ProcRoot = filepath.Join(limits.ProcRoot, "missing")
	if _, err := agentProcesses(); err == nil {
		t.Error("an unreadable /proc read as a node without agents")
	}
}

// A shipper that starts after the load began and stops before it ended is
// caught by the looks in between, and fails a step declared without one.
func TestProcessWatchSeesAShipperOnlyInTheMiddle(t *testing.T) {
	var mu sync.Mutex
	looks := 0
	midLoad := make(chan struct{})
	list := func() ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		looks++
		switch {
		case looks == 3:
			return []string{"vector (pid 7)"}, nil
		case looks == 5:
			close(midLoad)
		}
		return nil, nil
	}
	w := startProcessWatch(list, time.Millisecond)
	<-midLoad
	seen, n, err := w.finish()
	if err != nil || n < 5 || strings.Join(seen, ", ") != "vector (pid 7)" {
		t.Fatalf("seen %q in %d looks (%v), want the mid-load vector", seen, n, err)
	}
	g := ShippingGate(results.Shipping{Mode: "off", Processes: seen, ProcessLooks: n}, nil)
	if g.Passed || g.NotChecked || !strings.Contains(g.Detail, `shipping = "off" was declared, but vector (pid 7) ran on the node during the load`) {
		t.Fatalf("a mid-load shipper passed: %+v", g)
	}
	// looks that fail are counted apart and their error kept
	failing := startProcessWatch(func() ([]string, error) { return nil, errors.New("no /proc") }, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	if _, n, err := failing.finish(); n != 0 || err == nil {
		t.Fatalf("failed looks: %d counted, error %v", n, err)
	}
}
