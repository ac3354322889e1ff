package nomad

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/limits"
)

// The tool's task is looked for until it runs, then its cgroup is read
// until the cgroup goes with the task.
func TestSampleTaskCPUFollowsTheTaskUntilItExits(t *testing.T) {
	looks := 0
	locate := func() (string, float64, error) {
		if looks++; looks < 3 {
			return "", 0, nil // pending, then the warm-up
		}
		return "/docker/abc", 0.05, nil
	}
	reads := 0
	read := func(cgroup string) (limits.Usage, error) {
		if cgroup != "/docker/abc" {
			t.Errorf("read %q", cgroup)
		}
		if reads++; reads > 4 {
			return limits.Usage{}, errors.New("no such file")
		}
		return limits.Usage{At: time.Unix(int64(reads), 0), CPU: time.Duration(reads) * 50 * time.Millisecond}, nil
	}
	run := sampleTaskCPU(make(chan struct{}), locate, read, 4*time.Millisecond)
	if len(run.CPU) != 4 || run.CPUSource != "cgroup /docker/abc" || run.LimitCores != 0.05 || run.CPUError != "" {
		t.Fatalf("%d readings, %+v", len(run.CPU), run)
	}
}

// A task that runs where this machine cannot read it, or is never seen
// running, leaves its CPU unknown and says why.
func TestSampleTaskCPUSaysWhyItReadNothing(t *testing.T) {
	read := func(string) (limits.Usage, error) { t.Fatal("read without a cgroup"); return limits.Usage{}, nil }
	run := sampleTaskCPU(make(chan struct{}), func() (string, float64, error) {
		return "", 0, errors.New("docker inspect load-1: no such container")
	}, read, time.Millisecond)
	if run.CPUError != "docker inspect load-1: no such container" || len(run.CPU) != 0 {
		t.Fatalf("%+v", run)
	}
	stop := make(chan struct{})
	close(stop)
	run = sampleTaskCPU(stop, func() (string, float64, error) { return "", 0, nil }, read, time.Millisecond)
	if run.CPUError != "the tool's task was not seen running" {
		t.Fatalf("%+v", run)
	}
}

func TestTaskTimesAreTheMeasuredTasks(t *testing.T) {
	warm, start, end := time.Unix(100, 0), time.Unix(105, 0), time.Unix(140, 0)
	alloc := &api.Allocation{TaskStates: map[string]*api.TaskState{
		"warmup":     {StartedAt: warm, FinishedAt: start},
		measuredTask: {StartedAt: start, FinishedAt: end},
	}}
	if s, e := taskTimes(alloc, measuredTask); !s.Equal(start) || !e.Equal(end) {
		t.Fatalf("%s .. %s", s, e)
	}
	if s, e := taskTimes(&api.Allocation{}, measuredTask); !s.IsZero() || !e.IsZero() {
		t.Fatalf("a task without a state: %s .. %s", s, e)
	}
}
