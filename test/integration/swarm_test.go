//go:build integration

package integration

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// TestSwarmLimitsAndParity deploys Taewa's vertical variant on Swarm and
// reads 0.5 cores and 512 MiB back from its container's cgroup; then gives
// that container a CPU limit behind Swarm's back, and the step that reuses
// the deployment is invalid by the limits gate, naming what it found.
func TestSwarmLimitsAndParity(t *testing.T) {
	work := t.TempDir()
	vars := []string{"--var", "variant=vertical", "--var", "resource_scale=0.25", "--var", "job_name=taewa-swarm-limits"}
	must(t, orchbench, append([]string{"pack", "run", "taewa", "--orchestrator", "swarm", "--wait"}, vars...)...)
	t.Cleanup(func() {
		sh(root, orchbench, append([]string{"pack", "destroy", "taewa", "--orchestrator", "swarm"}, vars...)...)
	})
	run := func(name string) results.StepResult {
		return taewaVerticalStep(t, "swarm", "taewa-swarm-limits", filepath.Join(work, name))
	}

	s := run("right")
	limits := gateOf(s, "limits")
	if !s.Measured() || !limits.Passed || !strings.Contains(limits.Detail, "quota: 0.5 cores (a CFS quota of 50000 µs per 100000 µs period)") ||
		!strings.Contains(limits.Detail, "512 MiB") {
		t.Fatalf("Swarm step %s, limits gate %+v", s.Outcome, limits)
	}
	if s.Metadata["orchestrator"] != "swarm" || s.Metadata["entry"] != "host-port" || s.Metadata["load_runner"] != "swarm" {
		t.Errorf("orchestrator %v, entry %v, load runner %v", s.Metadata["orchestrator"], s.Metadata["entry"], s.Metadata["load_runner"])
	}
	if lp := gateOf(s, "load-path"); !lp.Passed {
		t.Errorf("load path on Swarm: %+v", lp)
	}

	// the task's container killed behind Swarm's back during the load: Swarm
	// starts a new task, the step reports it and is broken
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	killed := make(chan int, 1)
	pid, _ := strconv.Atoi(strings.TrimSpace(must(t, "docker", "inspect", "-f", "{{.State.Pid}}", theContainer(t, "taewa-swarm-limits"))))
	go killWhenLoadRuns(ctx, func() []int { return []int{pid} }, 1500*time.Millisecond, killed)
	s = run("unplanned")
	if n := <-killed; n == 0 {
		t.Fatal("the task's process was not there to kill during the load")
	}
	events := gateOf(s, "task-events")
	if s.Outcome != results.OutcomeBroken || events.Passed || !strings.Contains(events.Detail, "taewa/taewa exited (exit code 137)") {
		t.Fatalf("a task killed during the load on Swarm: step %s %v, task-events gate %+v", s.Outcome, s.Reasons, events)
	}
	t.Logf("unplanned kill: %s", events.Detail)
	eventually(t, time.Minute, "Swarm replaces the killed task", func() error {
		_, err := sh(root, orchbench, append([]string{"pack", "run", "taewa", "--orchestrator", "swarm", "--wait"}, vars...)...)
		return err
	})

	// a wrong limit on Swarm only: the running task's container gets 1 core
	container := theContainer(t, "taewa-swarm-limits")
	must(t, "docker", "update", "--cpus", "1", container)
	s = run("wrong")
	limits = gateOf(s, "limits")
	if s.Outcome != results.OutcomeInvalid || limits.Passed || !strings.Contains(limits.Detail, "enforces 1.000 cores, the variant declares 0.500") {
		t.Fatalf("a wrong limit on Swarm: step %s, limits gate %+v", s.Outcome, limits)
	}
}

func gateOf(s results.StepResult, name string) results.Gate {
	for _, g := range s.Gates {
		if g.Name == name {
			return g
		}
	}
	return results.Gate{Name: name, Detail: "not run"}
}

// theContainer is the one running container of a Swarm job.
func theContainer(t *testing.T, job string) string {
	t.Helper()
	container := strings.TrimSpace(must(t, "docker", "ps", "-q", "--filter", "label=orchbench.job="+job))
	if container == "" || strings.Contains(container, "\n") {
		t.Fatalf("want the one container of the job, got %q", container)
	}
	return container
}
