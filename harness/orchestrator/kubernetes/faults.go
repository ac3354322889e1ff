package kubernetes

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InjectFault kills a pod's task container (the kubelet restarts it in the
// same pod, as Nomad restarts a task in place) or deletes the pod (its
// Deployment or StatefulSet makes a new one, as Nomad replaces a stopped
// allocation). The first running pod of the service is the one hit.
func (o *Orchestrator) InjectFault(ctx context.Context, d *orchestrator.Deployment, f orchestrator.Fault) (orchestrator.FaultHit, error) {
	var hit orchestrator.FaultHit
	ns := namespaceOf(d.Job)
	svc, err := o.client.CoreV1().Services(ns).Get(ctx, f.Service, metav1.GetOptions{})
	if err != nil {
		return hit, fmt.Errorf("kubernetes: fault on %s: %w", f.Service, err)
	}
	pods, _, err := o.runningPods(ctx, d.Job)
	if err != nil {
		return hit, err
	}
	var victim *corev1.Pod
	for i, p := range pods {
		if p.Labels[LabelService] == svc.Spec.Selector[LabelService] {
			victim = &pods[i]
			break
		}
	}
	if victim == nil {
		return hit, fmt.Errorf("kubernetes: fault on %s: no running pod", f.Service)
	}
	hit = orchestrator.FaultHit{Instance: victim.Name, Group: victim.Labels[LabelGroup]}
	switch f.Kind {
	case orchestrator.FaultKillTask:
		// the API has no way to kill one container in place (deleting the
		// pod replaces it): the pod's node's probe signals the container
		s, _ := mainStatus(*victim)
		if _, err := o.nodes.Node(victim.Spec.NodeName).SignalContainer(ctx, s.ContainerID, "SIGKILL"); err != nil {
			return hit, fmt.Errorf("kubernetes: fault on %s: kill the task container of pod %s: %w", f.Service, victim.Name, err)
		}
	case orchestrator.FaultReplaceInstance:
		zero := int64(0)
		if err := o.client.CoreV1().Pods(ns).Delete(ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			return hit, fmt.Errorf("kubernetes: fault on %s: delete pod %s: %w", f.Service, victim.Name, err)
		}
	default:
		return hit, fmt.Errorf("kubernetes: fault kind %q is not known (known: %s)", f.Kind, orchestrator.FaultKindList())
	}
	return hit, nil
}
