package kubernetes

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitHealthy waits until every workload of the job has all its replicas
// of the current version ready (their readiness probes passing), and ends
// early on a pod that cannot start: an image missing from the node, a
// container that exits or is OOM-killed, a pod no node has room for.
func (o *Orchestrator) WaitHealthy(ctx context.Context, d *orchestrator.Deployment, timeout time.Duration) error {
	began := time.Now()
	err := orchestrator.WaitUntilHealthy(ctx, Name, d.Job, timeout, o.poll, o.progress, func(ctx context.Context) (bool, string, error) {
		return o.healthy(ctx, d.Job)
	})
	if err != nil {
		return err
	}
	o.mu.Lock()
	at, ok := o.deployedAt[d.Job]
	o.mu.Unlock()
	if !ok || !d.Fresh {
		at = began
	}
	d.DeployDuration = time.Since(at)
	return nil
}

func (o *Orchestrator) healthy(ctx context.Context, job string) (bool, string, error) {
	ns := namespaceOf(job)
	running, err := o.jobWorkloads(ctx, job)
	if err != nil {
		return false, "", err
	}
	want := map[string]int{}
	// each workload's pods of its current template
	current := map[string]string{}
	for _, w := range running {
		want[w.name], current[w.name] = w.replicas, w.podVersion
	}
	if len(want) == 0 {
		return false, "", fmt.Errorf("kubernetes: job %s has no workload in namespace %s (deploy it first)", job, ns)
	}
	pods, err := o.jobPods(ctx, job)
	if err != nil {
		return false, "", err
	}
	ready := map[string]int{}
	for _, p := range pods {
		if p.Labels[LabelVersion] != current[p.Labels[LabelService]] {
			continue
		}
		if why := podFailing(p); why != "" {
			return false, "", fmt.Errorf("kubernetes: job %s: pod %s (%s): %s", job, p.Name, p.Labels[LabelService], why)
		}
		if podReady(p) {
			ready[p.Labels[LabelService]]++
		}
	}
	var waiting []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if ready[name] < want[name] {
			waiting = append(waiting, fmt.Sprintf("%s %d/%d", name, ready[name], want[name]))
		}
	}
	if len(waiting) > 0 {
		return false, "waiting for " + strings.Join(waiting, ", "), nil
	}
	// kube-proxy programs a Service's rules a moment after its pods are
	// ready: until then a caller (the load, or a service calling its
	// upstream) is refused, so every Service of the job must answer
	if waiting, err := o.unprogrammed(ctx, ns); err != nil || waiting != "" {
		return false, fmt.Sprintf("%d workloads ready, waiting for %s", len(want), waiting), err
	}
	return true, fmt.Sprintf("%d workloads ready", len(want)), nil
}

// unprogrammed names the first Service of the namespace that does not yet
// answer on the node: a ClusterIP on its address, the entry on its NodePort.
func (o *Orchestrator) unprogrammed(ctx context.Context, ns string) (string, error) {
	svcs, err := o.client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("kubernetes: list services of %s: %w", ns, err)
	}
	for _, s := range svcs.Items {
		if len(s.Spec.Ports) == 0 {
			continue
		}
		addr, what := "", ""
		switch {
		case s.Spec.Type == corev1.ServiceTypeNodePort && s.Spec.Ports[0].NodePort > 0:
			addr, what = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(s.Spec.Ports[0].NodePort))), "the entry NodePort"
		case s.Spec.ClusterIP != "" && s.Spec.ClusterIP != corev1.ClusterIPNone:
			addr, what = net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(int(s.Spec.Ports[0].Port))), "service "+s.Name
		default:
			continue
		}
		dial, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := o.access.NetNS.Dial(dial, "tcp", addr)
		cancel()
		if err != nil {
			return fmt.Sprintf("%s (%s: %v)", what, addr, err), nil
		}
		conn.Close()
	}
	return "", nil
}

func podReady(p corev1.Pod) bool {
	if !running(p) {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podFailing says why a pod cannot become healthy by waiting, "" while it may.
func podFailing(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return "cannot be placed: " + c.Message
		}
	}
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				return fmt.Sprintf("%s: %s (is the image imported? just k8s-images)", w.Reason, w.Message)
			case "CrashLoopBackOff":
				last := ""
				if t := s.LastTerminationState.Terminated; t != nil {
					last = fmt.Sprintf(": last exit %d (%s)", t.ExitCode, t.Reason)
				}
				return fmt.Sprintf("container %s keeps failing, restarted %d times%s", s.Name, s.RestartCount, last)
			}
		}
		if t := s.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
			return fmt.Sprintf("container %s was OOM-killed (memory limit too small for the work)", s.Name)
		}
	}
	return ""
}
