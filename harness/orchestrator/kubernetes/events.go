package kubernetes

import (
	"context"
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TaskEvents reads the job's pods (a pod's container statuses keep the last
// termination: its reason says OOMKilled) and the namespace's events (the
// kubelet's "Killing" outlives a deleted pod). Kubernetes stamps both to the
// second, so whatever happened in the second since falls in is counted.
func (o *Orchestrator) TaskEvents(ctx context.Context, d *orchestrator.Deployment, since time.Time) ([]orchestrator.TaskEvent, error) {
	since = since.Truncate(time.Second)
	ns := namespaceOf(d.Job)
	pods, err := o.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelJob + "=" + d.Job})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: job %s: list pods: %w", d.Job, err)
	}
	groups := map[string]string{}
	var out []orchestrator.TaskEvent
	for _, p := range pods.Items {
		groups[p.Name] = p.Labels[LabelGroup]
		out = append(out, podEvents(p, since)...)
	}
	kevents, err := o.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: job %s: list events: %w", d.Job, err)
	}
	for _, k := range kevents.Items {
		at := eventTime(k)
		if k.InvolvedObject.Kind != "Pod" || k.Reason != "Killing" || at.Before(since) {
			continue
		}
		out = append(out, orchestrator.TaskEvent{At: at, Kind: orchestrator.EventStopped, Group: groups[k.InvolvedObject.Name],
			Instance: k.InvolvedObject.Name, Detail: k.Message})
	}
	orchestrator.SortEvents(out)
	return out, nil
}

// podEvents is what the pod's own status tells from since on.
func podEvents(p corev1.Pod, since time.Time) []orchestrator.TaskEvent {
	group, task := p.Labels[LabelGroup], p.Labels[LabelTask]
	event := func(at metav1.Time, kind orchestrator.TaskEventKind, detail string) []orchestrator.TaskEvent {
		if at.Time.Before(since) {
			return nil
		}
		return []orchestrator.TaskEvent{{At: at.Time, Kind: kind, Group: group, Task: task, Instance: p.Name, Detail: detail}}
	}
	var out []orchestrator.TaskEvent
	out = append(out, event(p.CreationTimestamp, orchestrator.EventPlaced, "new pod")...)
	s, ok := mainStatus(p)
	if !ok {
		return out
	}
	if r := s.State.Running; r != nil {
		out = append(out, event(r.StartedAt, orchestrator.EventStarted, "")...)
	}
	for _, t := range []*corev1.ContainerStateTerminated{s.LastTerminationState.Terminated, s.State.Terminated} {
		if t == nil {
			continue
		}
		kind := orchestrator.EventExited
		if t.Reason == "OOMKilled" {
			kind = orchestrator.EventOOMKilled
		}
		detail := fmt.Sprintf("exit code %d", t.ExitCode)
		if t.Reason != "" {
			detail += ", " + t.Reason
		}
		out = append(out, event(t.FinishedAt, kind, detail)...)
	}
	if w := s.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
		out = append(out, orchestrator.TaskEvent{At: time.Now(), Kind: orchestrator.EventFailed, Group: group, Task: task, Instance: p.Name, Detail: w.Reason + ": " + w.Message})
	}
	return out
}

// eventTime is the most precise time a kube event carries.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	default:
		return e.FirstTimestamp.Time
	}
}
