package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// TaskEvents reads the Docker engine's container events of the job's tasks
// from since until now. Swarm keeps no per-task history beyond a few
// retired tasks, and its task states do not say "OOM"; the engine's event
// stream does ("oom" before "die"), for every container it ran.
func (o *Orchestrator) TaskEvents(ctx context.Context, d *orchestrator.Deployment, since time.Time) ([]orchestrator.TaskEvent, error) {
	return o.Engine.TaskEvents(ctx, d.Job, since, time.Now())
}

// TaskEvents lists the job's container events in [since, until] from the
// engine of every ready node: each engine knows its own containers only.
func (a *Engine) TaskEvents(ctx context.Context, job string, since, until time.Time) ([]orchestrator.TaskEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	engines, err := a.engines().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("swarm: events of job %s: %w", job, err)
	}
	var out []orchestrator.TaskEvent
	for _, e := range engines {
		got, err := engineEvents(ctx, e.Client, job, since, until)
		if err != nil {
			return out, fmt.Errorf("swarm: events of job %s on node %s (engine %s): %w", job, e.Name, e.Host, err)
		}
		out = append(out, got...)
	}
	orchestrator.SortEvents(out)
	return out, nil
}

// engineEvents is one engine's share of TaskEvents.
func engineEvents(ctx context.Context, c *client.Client, job string, since, until time.Time) ([]orchestrator.TaskEvent, error) {
	stream := c.Events(ctx, client.EventsListOptions{
		Since:   unixNano(since),
		Until:   unixNano(until),
		Filters: client.Filters{}.Add("type", "container").Add("label", LabelJob+"="+job),
	})
	var out []orchestrator.TaskEvent
	for {
		select {
		case m := <-stream.Messages:
			if e, ok := containerEvent(m); ok {
				out = append(out, e)
			}
		case err := <-stream.Err:
			if err != nil && !errors.Is(err, io.EOF) {
				return out, err
			}
			return out, nil
		}
	}
}

// containerEvent maps the engine's container actions; create, attach,
// destroy and the like change nothing about a running task.
func containerEvent(m events.Message) (orchestrator.TaskEvent, bool) {
	attrs := m.Actor.Attributes
	e := orchestrator.TaskEvent{At: time.Unix(0, m.TimeNano), Group: attrs[LabelGroup], Task: attrs[LabelTask], Instance: attrs["com.docker.swarm.task.id"]}
	if e.Instance == "" {
		e.Instance = m.Actor.ID
	}
	switch m.Action {
	case events.ActionStart:
		e.Kind = orchestrator.EventStarted
	case events.ActionOOM:
		e.Kind = orchestrator.EventOOMKilled
	case events.ActionDie:
		e.Kind = orchestrator.EventExited
		e.Detail = "exit code " + attrs["exitCode"]
	case events.ActionKill:
		e.Kind = orchestrator.EventStopped
		if sig := attrs["signal"]; sig != "" {
			e.Detail = "signal " + sig
		}
	default:
		return e, false
	}
	return e, true
}

// unixNano is the engine's "seconds.nanoseconds" timestamp form.
func unixNano(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10) + "." + fmt.Sprintf("%09d", t.Nanosecond())
}
