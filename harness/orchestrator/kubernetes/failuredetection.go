package kubernetes

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ orchestrator.FailureDetection = (*Orchestrator)(nil)

// How soon a lost node's pods move is two settings: the controller
// manager's node-monitor-grace-period (a node silent that long is marked
// NotReady and tainted), then the tolerationSeconds of the not-ready and
// unreachable taints on each pod, which the API server's
// DefaultTolerationSeconds admission adds to a pod that sets none. The
// second is read as admission applies it; the first no API serves, so the
// cluster publishes it in a ConfigMap (cluster/nodes-k8s.sh), and a
// cluster that does not is recorded as running Kubernetes' default.
const (
	nodeLossNamespace = metav1.NamespaceSystem
	nodeLossConfigMap = "orchbench-node-loss"
	nodeLossGraceKey  = "node-monitor-grace-period"
	// defaultNodeMonitorGrace is kube-controller-manager's own default
	// since Kubernetes 1.32.
	defaultNodeMonitorGrace = "50s"
)

// the record's keys, named after the flags that set them
const (
	fdGrace       = "node_monitor_grace_period"
	fdNotReady    = "not_ready_toleration"
	fdUnreachable = "unreachable_toleration"
)

// FailureDetection reads the grace before a silent node is NotReady and
// how long pods then stay bound to it: the tolerations come from a pod
// created in dry-run, so admission fills them in and nothing is stored.
func (o *Orchestrator) FailureDetection(ctx context.Context) (map[string]string, error) {
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "orchbench-failure-detection"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr(false),
			Containers:                   []corev1.Container{{Name: "pause", Image: "orchbench/pause:local"}},
		},
	}
	admitted, err := o.client.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: a pod created in dry-run, for its default tolerations: %w", err)
	}
	cm, err := o.client.CoreV1().ConfigMaps(nodeLossNamespace).Get(ctx, nodeLossConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = nil
	case err != nil:
		return nil, fmt.Errorf("kubernetes: %s/%s: %w", nodeLossNamespace, nodeLossConfigMap, err)
	}
	return failureDetection(admitted.Spec.Tolerations, cm), nil
}

// failureDetection words the settings: the grace as published (or the
// default, said so), each taint's toleration as admitted (or none: pods
// then stay bound to a lost node until it returns).
func failureDetection(admitted []corev1.Toleration, published *corev1.ConfigMap) map[string]string {
	out := map[string]string{
		fdGrace:       defaultNodeMonitorGrace + " (Kubernetes' default; the cluster publishes no " + nodeLossNamespace + "/" + nodeLossConfigMap + ")",
		fdNotReady:    "none (pods stay bound to a NotReady node)",
		fdUnreachable: "none (pods stay bound to an unreachable node)",
	}
	if published != nil {
		if v := published.Data[nodeLossGraceKey]; v != "" {
			out[fdGrace] = v
		} else {
			out[fdGrace] = fmt.Sprintf("%s (Kubernetes' default; %s/%s has no %s)", defaultNodeMonitorGrace, nodeLossNamespace, nodeLossConfigMap, nodeLossGraceKey)
		}
	}
	for _, t := range admitted {
		if t.Effect != corev1.TaintEffectNoExecute || t.TolerationSeconds == nil {
			continue
		}
		switch t.Key {
		case corev1.TaintNodeNotReady:
			out[fdNotReady] = fmt.Sprintf("%ds", *t.TolerationSeconds)
		case corev1.TaintNodeUnreachable:
			out[fdUnreachable] = fmt.Sprintf("%ds", *t.TolerationSeconds)
		}
	}
	return out
}
