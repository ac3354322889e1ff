package swarm

import (
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/swarm"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
)

func task(id string, slot int, version string, desired, state swarm.TaskState, at time.Time, err string) swarm.Task {
	t := swarm.Task{ID: id, Slot: slot, DesiredState: desired,
		Spec:   swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Labels: map[string]string{LabelVersion: version}}},
		Status: swarm.TaskStatus{State: state, Timestamp: at, Err: err, ContainerStatus: &swarm.ContainerStatus{ContainerID: "c" + id}},
	}
	t.CreatedAt = at
	return t
}

func TestTaskFailure(t *testing.T) {
	p := mustTranslate(t, tt.Taewa(), Options{}) // restart: 2 attempts
	svc := p.Services[0]
	d := &deployment{Job: p.Job, Version: p.Version, Plan: p}
	since := time.Now()
	before, after := since.Add(-time.Second), since.Add(time.Second)
	failed := func(id string, slot int, at time.Time) swarm.Task {
		return task(id, slot, p.Version, swarm.TaskStateShutdown, swarm.TaskStateFailed, at, "task: non-zero exit (137)")
	}
	cases := []struct {
		name  string
		tasks []swarm.Task
		want  string // "" for no verdict
	}{
		{"running", []swarm.Task{task("a", 1, p.Version, swarm.TaskStateRunning, swarm.TaskStateRunning, after, "")}, ""},
		{"rejected", []swarm.Task{task("a", 1, p.Version, swarm.TaskStateShutdown, swarm.TaskStateRejected, after, "No such image: orchbench/taewa:nope")}, "was rejected: No such image: orchbench/taewa:nope"},
		{"rejected before the baseline is history", []swarm.Task{task("a", 1, p.Version, swarm.TaskStateShutdown, swarm.TaskStateRejected, before, "x")}, ""},
		{"rejected of another version is history", []swarm.Task{task("a", 1, "old", swarm.TaskStateShutdown, swarm.TaskStateRejected, after, "x")}, ""},
		{"failures within the restart attempts", []swarm.Task{failed("a", 1, after), failed("b", 1, after), failed("c", 2, after)}, ""},
		{"more failures than attempts", []swarm.Task{failed("a", 1, after), failed("b", 1, after), failed("c", 1, after)}, "failed 3 times"},
		{"unplaceable", []swarm.Task{task("a", 1, p.Version, swarm.TaskStateRunning, swarm.TaskStatePending, since.Add(-time.Minute), "no suitable node (insufficient resources on 1 node)")}, "cannot be placed"},
	}
	for _, c := range cases {
		// the unplaceable task was created before the baseline but reported after it
		for i := range c.tasks {
			if c.tasks[i].Status.State == swarm.TaskStatePending {
				c.tasks[i].Status.Timestamp = after
			}
		}
		err := (&Engine{}).taskFailure(d, svc, c.tasks, since)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		case err != nil && !strings.HasPrefix(err.Error(), "swarm: job taewa-vertical: service taewa-vertical-taewa: task "):
			t.Errorf("%s: %v does not name the job, service and task", c.name, err)
		}
	}
}

func TestReusable(t *testing.T) {
	p := mustTranslate(t, tt.Taewa(), Options{})
	svc := func(version string, running, desired uint64, update swarm.UpdateState) map[string]swarm.Service {
		s := swarm.Service{Spec: swarm.ServiceSpec{Annotations: swarm.Annotations{Name: "taewa-vertical-taewa", Labels: map[string]string{LabelVersion: version}}},
			ServiceStatus: &swarm.ServiceStatus{RunningTasks: running, DesiredTasks: desired}}
		if update != "" {
			s.UpdateStatus = &swarm.UpdateStatus{State: update}
		}
		return map[string]swarm.Service{"taewa-vertical-taewa": s}
	}
	a := &Engine{}
	if !a.reusable(p, svc(p.Version, 2, 2, "")) {
		t.Error("a running job of this version is not reused")
	}
	if !a.reusable(p, svc(p.Version, 2, 2, swarm.UpdateStateCompleted)) {
		t.Error("a job whose update completed is not reused")
	}
	for name, cur := range map[string]map[string]swarm.Service{
		"other version":    svc("old", 2, 2, ""),
		"a task missing":   svc(p.Version, 1, 2, ""),
		"updating":         svc(p.Version, 2, 2, swarm.UpdateStateUpdating),
		"no service":       {},
		"an extra service": {"taewa": svc(p.Version, 2, 2, "")["taewa"], "other": {}},
	} {
		if a.reusable(p, cur) {
			t.Errorf("%s: reused", name)
		}
	}
}

func TestRunningTasks(t *testing.T) {
	now := time.Now()
	tasks := []swarm.Task{
		task("a", 1, "v", swarm.TaskStateRunning, swarm.TaskStateRunning, now, ""),
		task("b", 2, "v", swarm.TaskStateShutdown, swarm.TaskStateRunning, now, ""), // being stopped
		task("c", 3, "old", swarm.TaskStateRunning, swarm.TaskStateRunning, now, ""),
		task("d", 4, "v", swarm.TaskStateRunning, swarm.TaskStateStarting, now, ""),
	}
	got := runningTasks(tasks, "v")
	if len(got) != 1 || got[0].ID != "a" {
		t.Errorf("running tasks %v", got)
	}
}

// A redeploy of an unchanged definition while Swarm restarts a killed task
// waits for the forced replacement, not the restart it is about to stop.
func TestOfTemplateKeepsTheForcedTasks(t *testing.T) {
	now := time.Now()
	restarted := task("restart", 1, "v", swarm.TaskStateRunning, swarm.TaskStateRunning, now, "")
	forced := task("forced", 1, "v", swarm.TaskStateRunning, swarm.TaskStateRunning, now, "")
	forced.Spec.ForceUpdate = 1
	got := ofTemplate([]swarm.Task{restarted, forced}, 1)
	if len(got) != 1 || got[0].ID != "forced" {
		t.Errorf("tasks of the current template %v", got)
	}
	if got := ofTemplate([]swarm.Task{restarted, forced}, 2); len(got) != 0 {
		t.Errorf("no task of template 2 runs yet, got %v", got)
	}
}
