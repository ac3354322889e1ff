package swarm

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"
)

// faultWait bounds how long a fault waits for Swarm to notice the task ended.
const faultWait = 60 * time.Second

// KillTask kills one running task's container (the lowest slot) and returns
// the task's ID once Swarm has seen it end; Swarm's restart policy starts a
// new task (a new container) in its slot.
func (a *Engine) KillTask(ctx context.Context, d *deployment, service string) (string, error) {
	return a.endTask(ctx, d, service, "kill", func(c *client.Client, id string) error {
		_, err := c.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"})
		return err
	})
}

// ReplaceTask stops one running task's container gracefully (its stop
// signal, then the stop grace period), so Swarm schedules a new task for the
// slot on whichever node fits, as Nomad reschedules a stopped allocation,
// and returns the task's ID once Swarm has seen it end. Swarm has no call to
// remove one task of a service: a stopped container is how its task ends.
// Both faults count against the restart policy's attempts, and with restart
// attempts = 0 (condition none) nothing replaces the task.
func (a *Engine) ReplaceTask(ctx context.Context, d *deployment, service string) (string, error) {
	return a.endTask(ctx, d, service, "stop", func(c *client.Client, id string) error {
		_, err := c.ContainerStop(ctx, id, client.ContainerStopOptions{})
		return err
	})
}

func (a *Engine) endTask(ctx context.Context, d *deployment, service, verb string, end func(engine *client.Client, containerID string) error) (string, error) {
	name := service
	if svc := d.Plan.Service(service); svc != nil {
		name = svc.Name
	}
	id, err := a.serviceID(ctx, d, name)
	if err != nil {
		return "", err
	}
	tasks, err := a.serviceTasks(ctx, id)
	if err != nil {
		return "", err
	}
	running := runningTasks(tasks, d.Version)
	if len(running) == 0 {
		return "", fmt.Errorf("swarm: job %s: service %s has no running task to %s", d.Job, service, verb)
	}
	t := running[0]
	cid := t.Status.ContainerStatus.ContainerID
	e, err := a.engines().For(ctx, t.NodeID)
	if err != nil {
		return "", fmt.Errorf("swarm: job %s: %s task %s (%s slot %d): %w", d.Job, verb, shortID(t.ID), service, t.Slot, err)
	}
	if err := end(e.Client, cid); err != nil {
		return "", fmt.Errorf("swarm: job %s: %s container %s of task %s (%s slot %d) on node %s (engine %s): %w", d.Job, verb, shortID(cid), shortID(t.ID), service, t.Slot, e.Name, e.Host, err)
	}
	deadline := time.Now().Add(faultWait)
	for {
		res, err := a.Client.TaskInspect(ctx, t.ID, client.TaskInspectOptions{})
		if err != nil {
			return "", fmt.Errorf("swarm: job %s: task %s after %s: %w", d.Job, shortID(t.ID), verb, err)
		}
		if res.Task.Status.State != swarm.TaskStateRunning {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("swarm: job %s: task %s still running %s after its container was sent %s", d.Job, shortID(t.ID), faultWait, verb)
		}
		if err := sleep(ctx, a.poll()); err != nil {
			return "", err
		}
	}
	// the ended task is history now: WaitHealthy judges what follows
	a.setBaseline(d.Job, time.Now())
	return t.ID, nil
}
