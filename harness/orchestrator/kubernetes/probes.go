package kubernetes

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

var _ orchestrator.ProbeFinder = (*Orchestrator)(nil)

// ProbeLabel selects the probe DaemonSet's pods (cluster/kubernetes/node-probe.yaml).
const ProbeLabel = "app.kubernetes.io/name=" + orchestrator.NodeProbeJob

// NodeProbes finds the probes the node-probe DaemonSet runs: each running
// pod's node (spec.nodeName) at that node's address (status.hostIP; the
// pods use the host's network) and the container's port. The probes are
// reached in the cluster's network namespace, as the API server is.
func (o *Orchestrator) NodeProbes(ctx context.Context) (map[string]*nodeprobe.Client, error) {
	ns, name := orchestrator.KubernetesProbeNamespace, orchestrator.NodeProbeJob
	if _, err := o.client.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("kubernetes: daemonset %s/%s: %w", ns, name, orchestrator.ErrNoNodeProbes)
		}
		return nil, fmt.Errorf("kubernetes: daemonset %s/%s: %w", ns, name, err)
	}
	pods, err := o.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: ProbeLabel})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: pods of daemonset %s/%s: %w", ns, name, err)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: o.access.NetNS.Dial}}
	out := map[string]*nodeprobe.Client{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Status.HostIP == "" || p.Spec.NodeName == "" {
			continue
		}
		port, err := probePort(p)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: daemonset %s/%s: %w", ns, name, err)
		}
		c := nodeprobe.NewClient(p.Spec.NodeName, net.JoinHostPort(p.Status.HostIP, strconv.Itoa(port)))
		c.HTTP = hc
		out[p.Spec.NodeName] = c
	}
	return out, nil
}

// probePort is the port the pod's probe container declares.
func probePort(p corev1.Pod) (int, error) {
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == orchestrator.NodeProbePortLabel {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("pod %s declares no port %q", p.Name, orchestrator.NodeProbePortLabel)
}
