package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
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
	agents, err := agentProcesses(context.Background(), []nodeprobe.Node{nodeprobe.Local{NodeName: "n1"}}, nil)
	if got := strings.Join(agents, ", "); err != nil || got != "otelcol-orchbench (pid 101), vector (pid 102)" {
		t.Errorf("agent processes = %q, %v", got, err)
	}
	limits.ProcRoot = filepath.Join(limits.ProcRoot, "missing")
	if _, err := agentProcesses(context.Background(), []nodeprobe.Node{nodeprobe.Local{NodeName: "n1"}}, nil); err == nil {
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

// idleAgent is a node agent with no task on this machine.
type idleAgent struct{}

func (idleAgent) Name() string                                         { return "orchbench-agent" }
func (idleAgent) Tasks(context.Context) ([]orchestrator.Limits, error) { return nil, nil }
func (idleAgent) Pause(context.Context) error                          { return nil }
func (idleAgent) Resume(context.Context, time.Duration) error          { return nil }

// labelsLogs is an orchestrator whose task logs the agent ships, under a
// label of its own naming; keepsNoMarkers (marker_test.go) ships none.
type labelsLogs struct{ orchestrator.Orchestrator }

func (labelsLogs) ShippedLogJob(d *orchestrator.Deployment) string { return "job:" + d.Job }

// A step links to its logs only on an orchestrator whose logs the agent
// ships, under the labels that orchestrator gives them.
func TestShippingRecordLinksLogsOnlyWhereTheyAreShipped(t *testing.T) {
	jobs := []*orchestrator.Deployment{{Job: "sn"}, {Job: "sn-db"}}
	r := &Runner{Agent: idleAgent{}, LogsURL: "http://127.0.0.1:9428"}
	st := experiment.Step{Shipping: experiment.ShippingOn}
	rec := r.watchShipping(context.Background(), st, &deployment{orch: labelsLogs{}, jobs: jobs}, nil).finish(time.Time{}, time.Time{})
	if rec.LogsURL != r.LogsURL || strings.Join(rec.Jobs, ",") != "job:sn,job:sn-db" {
		t.Fatalf("shipped logs: url %q, jobs %q", rec.LogsURL, rec.Jobs)
	}
	rec = r.watchShipping(context.Background(), st, &deployment{orch: keepsNoMarkers{}, jobs: jobs}, nil).finish(time.Time{}, time.Time{})
	if rec.LogsURL != "" || len(rec.Jobs) != 0 {
		t.Fatalf("logs no agent ships got a link: url %q, jobs %q", rec.LogsURL, rec.Jobs)
	}
	// without an agent nothing is shipped, whatever the orchestrator
	r.Agent = nil
	rec = r.watchShipping(context.Background(), st, &deployment{orch: labelsLogs{}, jobs: jobs}, nil).finish(time.Time{}, time.Time{})
	if rec.LogsURL != "" || len(rec.Jobs) != 0 {
		t.Fatalf("no agent, yet a link: url %q, jobs %q", rec.LogsURL, rec.Jobs)
	}
}
