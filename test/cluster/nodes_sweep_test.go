//go:build multinode

package cluster

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

const nodeFaultSpec = "experiments/taewa-node-faults.hcl"

// A whole sweep with node faults, from the host through `nodes.sh env`:
// experiments/taewa-node-faults.hcl on Nomad and Swarm (Taewa on 2 of 3
// workers; a steady step, kill-node, kill-leader, partition-node). Every
// step ends with a verdict; every fault step records its node, the load's
// windows and the node's return, and the sweep goes on to the next step on
// a healed cluster; the report compares recovery. It uses the cluster of
// NODES_NAME when one is up (any shape with 3 workers), else brings up
// nodes=4 servers=3 and removes it:
//
//	NODES_NAME=hs NODES_SUBNET=10.83.0.0/24 go test -tags multinode -count=1 -timeout 60m -v -run TestNodesSweepNodeFaults ./test/cluster/
func TestNodesSweepNodeFaults(t *testing.T) {
	requireNodeHost(t, "just images taewa orchbench pause", taewaImage, "orchbench/orchbench:local", "orchbench/pause:local")
	bin := buildStatic(t)
	if dockerOut(t, "ps", "-q", "--filter", "label=orchbench.nodes="+clusterName) == "" {
		if r := runScript(t, []string{"ORCHBENCH_BIN=" + bin}, "nodes.sh", "up", "nodes=4", "servers=3", "node_cpus=0.4"); r.err != nil {
			runScript(t, nil, "nodes.sh", "down")
			t.Fatalf("nodes.sh up 4 3: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		t.Cleanup(func() {
			if r := runScript(t, nil, "nodes.sh", "down"); r.err != nil {
				t.Errorf("nodes.sh down: %v\n%s", r.err, r.stdout)
			}
		})
	}
	if r := runScript(t, nil, "nodes.sh", "push-images", taewaImage, "orchbench/orchbench:local", "orchbench/pause:local"); r.err != nil {
		t.Fatalf("push-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	env := nodesEnv(t)

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	began := time.Now()
	cmd := exec.CommandContext(ctx, bin, "sweep", "-f", nodeFaultSpec, "--dir", filepath.Join(dir, "results"), "--reports", filepath.Join(dir, "reports"), "--vm", "")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("orchbench sweep (%.0f s):\n%s", time.Since(began).Seconds(), out)
	if err != nil {
		t.Fatalf("the sweep failed: %v", err)
	}

	a := results.Archive{Dir: filepath.Join(dir, "results")}
	id, err := a.Resolve("taewa-node-faults")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := a.LoadSweep(id)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := a.LoadSteps(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(rec.Plan) {
		t.Fatalf("%d of %d steps archived", len(steps), len(rec.Plan))
	}
	for _, s := range steps {
		t.Logf("step %s: %s", s.Step, s.OutcomeText())
		if s.Outcome == "" || (s.Outcome != results.OutcomeValid && len(s.Reasons) == 0) {
			t.Errorf("step %s has no verdict with reasons: %q %v", s.Step, s.Outcome, s.Reasons)
		}
		_, f := results.EventsOf(s)
		if f == nil {
			continue
		}
		checkFaultRecord(t, s, *f)
	}
	page, err := os.ReadFile(filepath.Join(dir, "reports", id, "index.html"))
	if err != nil || !strings.Contains(string(page), `id="faults-recovery"`) {
		t.Errorf("the report has no faults and recovery table: %v", err)
	}
}

// checkFaultRecord: the fault was injected on a node, the load's windows
// around it were counted, and the node is back (the next step's cluster is
// whole); a worker's loss cost the load errors.
func checkFaultRecord(t *testing.T, s results.StepResult, f results.FaultRecord) {
	t.Helper()
	t.Logf("figure: %s %s: %s; windows %+v", s.Orchestrator, s.Step, f.NodeRecovery(), f.Windows)
	if f.Error != "" || f.Node == nil {
		t.Errorf("step %s: the fault was not injected on a node: %q", s.Step, f.Error)
		return
	}
	if f.RestoredSeconds == nil || f.RestoreError != "" {
		t.Errorf("step %s: node %s not back after the step: %s", s.Step, f.Node.Name, f.RestoreError)
	}
	if len(f.Windows) < 2 {
		t.Errorf("step %s: load windows %+v", s.Step, f.Windows)
	}
	switch f.Kind {
	case orchestrator.FaultKillNode, orchestrator.FaultPartitionNode:
		if f.Node.Role != "worker" {
			t.Errorf("step %s: %s hit %s, a %s", s.Step, f.Kind, f.Node.Name, f.Node.Role)
		}
		if f.Windows[1].Errors == 0 {
			t.Errorf("step %s: no error while worker %s was away: %+v", s.Step, f.Node.Name, f.Windows)
		}
	case orchestrator.FaultKillLeader:
		if f.Node.Role != "server" || f.Scheduling == nil {
			t.Errorf("step %s: kill-leader hit %+v with scheduling probe %v", s.Step, f.Node, f.Scheduling)
		}
	}
}

// nodesEnv is what `nodes.sh env` exports, as KEY=value.
func nodesEnv(t *testing.T) []string {
	t.Helper()
	r := runScript(t, nil, "nodes.sh", "env")
	if r.err != nil {
		t.Fatalf("nodes.sh env: %v\n%s", r.err, r.stderr)
	}
	var env []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		if kv, ok := strings.CutPrefix(sc.Text(), "export "); ok {
			env = append(env, kv)
		}
	}
	if len(env) < 4 {
		t.Fatalf("nodes.sh env printed %q", r.stdout)
	}
	return env
}
