package swarm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// placementGrace is how long a task may wait for a node with room before
// WaitHealthy takes Swarm's "no suitable node" as the verdict (an update
// frees the old tasks' reservations only once they stop).
const placementGrace = 15 * time.Second

// WaitHealthy waits until every service runs its replicas of the deployed
// version, each container passing its health check. It fails fast, naming
// the service, task and Swarm's error, when a task is rejected (a missing
// image, a mount that cannot be made), when tasks cannot be placed, when a
// slot fails more often than the restart policy allows since the last
// deploy or fault, or when Swarm paused or rolled back an update.
func (a *Engine) WaitHealthy(ctx context.Context, d *deployment, timeout time.Duration) error {
	err := orchestrator.WaitUntilHealthy(ctx, Name, d.Job, timeout, a.poll(), a.Progress, func(ctx context.Context) (bool, string, error) {
		return a.healthy(ctx, d)
	})
	if err != nil {
		return err
	}
	d.DeployDuration = time.Since(d.Started)
	return a.alignPolicy(ctx, d)
}

// healthy reports whether every service is ready, and a one-line state.
func (a *Engine) healthy(ctx context.Context, d *deployment) (bool, string, error) {
	since := a.baselineOf(d)
	services, err := a.jobServices(ctx, d.Job)
	if err != nil {
		return false, "", err
	}
	nodes, err := a.nodeNames(ctx)
	if err != nil {
		return false, "", err
	}
	allOK := true
	var parts []string
	for _, svc := range d.Plan.Services {
		cur, ok := services[svc.Name]
		if !ok {
			return false, "", fmt.Errorf("swarm: job %s: service %s is gone", d.Job, svc.Name)
		}
		if u := cur.UpdateStatus; u != nil {
			switch u.State {
			case swarm.UpdateStatePaused, swarm.UpdateStateRollbackStarted, swarm.UpdateStateRollbackPaused, swarm.UpdateStateRollbackCompleted:
				return false, "", fmt.Errorf("swarm: job %s: service %s: update %s: %s", d.Job, svc.Name, u.State, u.Message)
			}
		}
		tasks, err := a.serviceTasks(ctx, cur.ID)
		if err != nil {
			return false, "", err
		}
		if err := a.taskFailure(d, svc, tasks, since); err != nil {
			return false, "", err
		}
		// A redeploy of the same definition forces new tasks; until they
		// replace Swarm's own restarts, those still run the old template.
		running := ofTemplate(runningTasks(tasks, d.Version), cur.Spec.TaskTemplate.ForceUpdate)
		updating := cur.UpdateStatus != nil && cur.UpdateStatus.State == swarm.UpdateStateUpdating
		healthy := 0
		var checkErr error
		for _, t := range running {
			h, _, err := a.health(ctx, svc, nodes[t.NodeID], t.Status.ContainerStatus.ContainerID)
			if err != nil {
				// the container may be going away, or its node's probe
				// not answer: the next look decides, the state says why
				checkErr = err
				continue
			}
			if h == "healthy" || h == "none" {
				healthy++
			}
		}
		if updating || len(running) < svc.Replicas || healthy < svc.Replicas || len(running) > svc.Replicas {
			allOK = false
			state := fmt.Sprintf("%s %d/%d running %d healthy", svc.Name, len(running), svc.Replicas, healthy)
			if updating {
				state += " (updating)"
			}
			if checkErr != nil {
				state += fmt.Sprintf(" (a check could not run: %v)", checkErr)
			}
			parts = append(parts, state)
		}
	}
	if allOK {
		return true, fmt.Sprintf("version %s: all %d services healthy", d.Version, len(d.Plan.Services)), nil
	}
	return false, fmt.Sprintf("version %s: %s", d.Version, strings.Join(parts, ", ")), nil
}

// ofTemplate keeps the tasks made from the service's current task template
// (its force-update counter), not those of an earlier one.
func ofTemplate(tasks []swarm.Task, forceUpdate uint64) []swarm.Task {
	var out []swarm.Task
	for _, t := range tasks {
		if t.Spec.ForceUpdate == forceUpdate {
			out = append(out, t)
		}
	}
	return out
}

// taskFailure is the verdict on failed tasks of the deployment's version
// since the baseline, or nil while Swarm may still recover.
func (a *Engine) taskFailure(d *deployment, svc *translate.Service, tasks []swarm.Task, since time.Time) error {
	allowed := 3
	if rp := svc.Restart; rp != nil {
		switch {
		case rp.Condition == translate.RestartNone:
			allowed = 0
		case rp.MaxAttempts != nil && *rp.MaxAttempts > 0:
			allowed = int(*rp.MaxAttempts)
		}
	}
	failures := map[int]int{}
	for _, t := range tasks {
		if !current(t, d.Version) || !t.Status.Timestamp.After(since) {
			continue
		}
		name := fmt.Sprintf("swarm: job %s: service %s: task %s (slot %d)", d.Job, svc.Name, shortID(t.ID), t.Slot)
		switch t.Status.State {
		case swarm.TaskStateRejected:
			return fmt.Errorf("%s was rejected: %s", name, taskError(t))
		case swarm.TaskStatePending:
			if strings.Contains(t.Status.Err, "no suitable node") && time.Since(t.CreatedAt) > placementGrace {
				return fmt.Errorf("%s cannot be placed: %s (the service reserves %s)", name, t.Status.Err, describe(svc.Declared))
			}
		case swarm.TaskStateFailed:
			failures[t.Slot]++
			if failures[t.Slot] > allowed {
				return fmt.Errorf("%s failed %d times since %s, more than its restart policy allows: %s", name, failures[t.Slot], since.Format(time.TimeOnly), taskError(t))
			}
		}
	}
	return nil
}
