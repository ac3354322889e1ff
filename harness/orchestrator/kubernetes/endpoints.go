package kubernetes

import (
	"context"
	"fmt"
	"sort"

	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Endpoints lists where a service of the deployment answers. The measured
// service's first endpoint is the entry the load is aimed at: its NodePort
// on the node's loopback, inside the node's network namespace, which
// kube-proxy spreads over the ready pods. Each of those pods follows at its
// own address (Via the NodePort), so the probe checks every one and the
// CPU of each counts as the service's, as on Nomad and Swarm. Any other
// service is its ready pods' addresses.
func (o *Orchestrator) Endpoints(ctx context.Context, d *orchestrator.Deployment, service string) ([]orchestrator.Endpoint, error) {
	ns := namespaceOf(d.Job)
	pods, err := o.jobPods(ctx, d.Job)
	if err != nil {
		return nil, err
	}
	entry, err := o.client.CoreV1().Services(ns).Get(ctx, entryService, metav1.GetOptions{})
	if err == nil && service == d.App.Service {
		eps, err := entryEndpoints(*entry, pods, service, o.access)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: job %s: %w", d.Job, err)
		}
		return eps, nil
	}
	target, err := o.client.CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: job %s: service %s: %w", d.Job, service, err)
	}
	var out []orchestrator.Endpoint
	for _, p := range pods {
		if p.Labels[LabelService] != target.Spec.Selector[LabelService] || !podReady(p) || len(target.Spec.Ports) == 0 {
			continue
		}
		out = append(out, orchestrator.Endpoint{Service: service, Address: p.Status.PodIP, Port: target.Spec.Ports[0].TargetPort.IntValue(),
			Instance: p.Name, Node: p.Spec.NodeName, NetNS: o.access.NetNS, HarnessNetNS: o.access.ViaClient})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kubernetes: job %s: no ready instance of %s", d.Job, service)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out, nil
}

// entryEndpoints are the NodePort entry, first, then every ready pod behind
// it at PodIP:targetPort, named as Instances and Limits name the pod,
// reached in the namespace a gives, where pod addresses are routed.
func entryEndpoints(entry corev1.Service, pods []corev1.Pod, service string, a Access) ([]orchestrator.Endpoint, error) {
	if len(entry.Spec.Ports) == 0 || entry.Spec.Ports[0].NodePort == 0 {
		return nil, fmt.Errorf("the entry %s has no NodePort yet", service)
	}
	port := entry.Spec.Ports[0]
	var behind []orchestrator.Endpoint
	for _, p := range pods {
		if p.Labels[LabelService] != entry.Spec.Selector[LabelService] || !podReady(p) {
			continue
		}
		if p.Status.PodIP == "" {
			return nil, fmt.Errorf("pod %s of the entry %s is ready but has no address", p.Name, service)
		}
		behind = append(behind, orchestrator.Endpoint{Service: service, Address: p.Status.PodIP, Port: port.TargetPort.IntValue(),
			Instance: p.Name, Node: p.Spec.NodeName, NetNS: a.NetNS, HarnessNetNS: a.ViaClient, Via: orchestrator.EntryNodePort})
	}
	if len(behind) == 0 {
		return nil, fmt.Errorf("no ready instance behind the entry %s", service)
	}
	sort.Slice(behind, func(i, j int) bool { return behind[i].Instance < behind[j].Instance })
	// the entry is on the node of the pods (one node here); with several
	// nodes any of them answers on the NodePort
	nodePort := orchestrator.Endpoint{Service: service, Address: "127.0.0.1", Port: int(port.NodePort),
		Node: behind[0].Node, Entry: orchestrator.EntryNodePort, NetNS: a.NetNS, HarnessNetNS: a.ViaClient}
	return append([]orchestrator.Endpoint{nodePort}, behind...), nil
}
