package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/harness/hostinfo"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/placement"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readyNodes are the nodes that are Ready and schedulable.
func (o *Orchestrator) readyNodes(ctx context.Context) ([]corev1.Node, error) {
	list, err := o.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: list nodes: %w", err)
	}
	var out []corev1.Node
	for _, n := range list.Items {
		if n.Spec.Unschedulable {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kubernetes: no ready, schedulable node (just k8s-status)")
	}
	return out, nil
}

// Capacity is the smallest allocatable CPU and memory among the ready
// nodes that take the applications' pods: a node tainted against them (the
// emulated cluster's client node, which runs only the probe and the load)
// is no room for a pack.
func (o *Orchestrator) Capacity(ctx context.Context) (orchestrator.Capacity, error) {
	ready, err := o.readyNodes(ctx)
	if err != nil {
		return orchestrator.Capacity{}, err
	}
	nodes := appNodes(ready)
	if len(nodes) == 0 {
		return orchestrator.Capacity{}, fmt.Errorf("kubernetes: every ready node is tainted against the applications' pods (%s)", taintsOf(ready))
	}
	c := orchestrator.Capacity{Nodes: len(nodes), MHzPerCore: hostinfo.MHz()}
	for i, n := range nodes {
		cores := int(n.Status.Allocatable.Cpu().Value())
		mib := int(n.Status.Allocatable.Memory().Value() >> 20)
		if i == 0 || cores < c.Cores {
			c.Cores = cores
		}
		if i == 0 || mib < c.MemoryMiB {
			c.MemoryMiB = mib
		}
	}
	return c, nil
}

// appNodes are the nodes without a taint that keeps a pod off: the
// adapter's pods tolerate none (the load job tolerates the client's).
func appNodes(nodes []corev1.Node) []corev1.Node {
	var out []corev1.Node
	for _, n := range nodes {
		if !slices.ContainsFunc(n.Spec.Taints, keepsPodsOff) {
			out = append(out, n)
		}
	}
	return out
}

func keepsPodsOff(t corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// taintsOf names each node's taints, for an error.
func taintsOf(nodes []corev1.Node) string {
	var out []string
	for _, n := range nodes {
		for _, t := range n.Spec.Taints {
			out = append(out, fmt.Sprintf("%s: %s=%s:%s", n.Name, t.Key, t.Value, t.Effect))
		}
	}
	return strings.Join(out, ", ")
}

// Facts describe every node under Nomad's keys where the fact is the same
// (cpu.*, memory.totalbytes, kernel.*, os.*), so a parity table compares
// like with like; kubernetes.version is the kubelet's and
// container.runtime the CRI's. The CPU model and OS are not the API's to
// say: the sweep reads them on each node through its probe.
func (o *Orchestrator) Facts(ctx context.Context) (orchestrator.Facts, error) {
	nodes, err := o.readyNodes(ctx)
	if err != nil {
		return nil, err
	}
	out := orchestrator.Facts{}
	for _, n := range nodes {
		info := n.Status.NodeInfo
		f := map[string]string{}
		f["kubernetes.version"] = info.KubeletVersion
		f["container.runtime"] = info.ContainerRuntimeVersion
		f["kernel.name"] = info.OperatingSystem
		f["kernel.version"] = info.KernelVersion
		f["cpu.arch"] = unameMachine(info.Architecture)
		f["cpu.numcores"] = strconv.FormatInt(n.Status.Capacity.Cpu().Value(), 10)
		f["memory.totalbytes"] = strconv.FormatInt(n.Status.Capacity.Memory().Value(), 10)
		if v, ok := n.Labels[placement.NodeLinkDelay]; ok {
			f[orchestrator.FactLinkDelay] = v
		}
		out[n.Name] = f
	}
	return out, nil
}

// unameMachine words an architecture as the kernel does (uname -m), as the
// Docker engine reports it: the kubelet reports Go's name for it.
func unameMachine(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return goarch
}
