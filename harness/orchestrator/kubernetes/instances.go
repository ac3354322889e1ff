package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jobPods lists the job's pods that are not being deleted.
func (o *Orchestrator) jobPods(ctx context.Context, job string) ([]corev1.Pod, error) {
	list, err := o.client.CoreV1().Pods(namespaceOf(job)).List(ctx, metav1.ListOptions{LabelSelector: LabelJob + "=" + job})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: job %s: list pods: %w", job, err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// mainStatus is the status of the pod's one container (the group's task).
func mainStatus(p corev1.Pod) (corev1.ContainerStatus, bool) {
	task := p.Labels[LabelTask]
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == task {
			return s, true
		}
	}
	return corev1.ContainerStatus{}, false
}

func instanceOf(p corev1.Pod) (orchestrator.Instance, error) {
	in := orchestrator.Instance{
		ID: p.Name, Group: p.Labels[LabelGroup], Task: p.Labels[LabelTask], Node: p.Spec.NodeName, Driver: "containerd",
	}
	if d := p.Annotations[AnnotationDeclared]; d != "" {
		var decl contract.Task
		if err := json.Unmarshal([]byte(d), &decl); err != nil {
			return in, fmt.Errorf("kubernetes: pod %s: annotation %s: %w", p.Name, AnnotationDeclared, err)
		}
		in.Declared = decl
	}
	for _, c := range p.Spec.Containers {
		if c.Name == in.Task {
			in.Image = c.Image
		}
	}
	if s, ok := mainStatus(p); ok {
		in.Restarts = int(s.RestartCount)
		in.ImageID = s.ImageID
	}
	return in, nil
}

// running is true when the pod's task container runs now.
func running(p corev1.Pod) bool {
	s, ok := mainStatus(p)
	return p.Status.Phase == corev1.PodRunning && ok && s.State.Running != nil
}

// runningPods are the job's pods whose task runs now, with their instances.
func (o *Orchestrator) runningPods(ctx context.Context, job string) ([]corev1.Pod, []orchestrator.Instance, error) {
	pods, err := o.jobPods(ctx, job)
	if err != nil {
		return nil, nil, err
	}
	var out []corev1.Pod
	var ins []orchestrator.Instance
	for _, p := range pods {
		if !running(p) {
			continue
		}
		in, err := instanceOf(p)
		if err != nil {
			return nil, nil, err
		}
		out, ins = append(out, p), append(ins, in)
	}
	return out, ins, nil
}

// Instances lists the job's running pods with their declarations.
func (o *Orchestrator) Instances(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Instance, error) {
	_, ins, err := o.runningPods(ctx, d.Job)
	return ins, err
}

// Limits reads each running pod's task container's cgroup on its node,
// through the node's probe: the kubelet's own figures are what it was asked
// for, not what the kernel enforces.
func (o *Orchestrator) Limits(ctx context.Context, d *orchestrator.Deployment) ([]orchestrator.Limits, error) {
	pods, ins, err := o.runningPods(ctx, d.Job)
	if err != nil {
		return nil, err
	}
	// each node's process list is read once for all its pods
	procs := map[string][]limits.Membership{}
	var out []orchestrator.Limits
	for i, p := range pods {
		node := o.nodes.Node(p.Spec.NodeName)
		if _, read := procs[node.Name()]; !read {
			list, err := node.Processes(ctx)
			if err != nil {
				return nil, err
			}
			procs[node.Name()] = list
		}
		pid, err := taskPID(procs[node.Name()], p)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: job %s: %w", d.Job, err)
		}
		e, err := node.Limits(ctx, pid)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: job %s: limits of pod %s (pid %d): %w", d.Job, p.Name, pid, err)
		}
		out = append(out, orchestrator.LimitsOf(ins[i], e))
	}
	return out, nil
}

// taskPID is a process of the pod's task container among its node's processes.
func taskPID(procs []limits.Membership, p corev1.Pod) (int, error) {
	s, _ := mainStatus(p)
	if pid := containerPID(procs, s.ContainerID); pid != 0 {
		return pid, nil
	}
	return 0, fmt.Errorf("pod %s: no process of container %s on node %s", p.Name, s.ContainerID, p.Spec.NodeName)
}

// containerPID finds a process of the container whose CRI ID is id
// ("containerd://<hex>"): the kubelet names the container's cgroup after
// the ID, in every controller and in both cgroup versions.
func containerPID(procs []limits.Membership, id string) int {
	_, hexID, ok := strings.Cut(id, "://")
	if !ok || hexID == "" {
		return 0
	}
	for _, m := range procs {
		for _, path := range m.Paths {
			if strings.HasSuffix(path, "/"+hexID) || strings.HasSuffix(path, "-"+hexID+".scope") {
				return m.PID
			}
		}
	}
	return 0
}
