package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/results"
)

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
	g := gates.ShippingGate(results.Shipping{Mode: "off", Processes: seen, ProcessLooks: n}, nil)
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
