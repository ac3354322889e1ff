package kubernetes

import (
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// probeManifest is the DaemonSet cluster/kubernetes.sh applies.
func probeManifest(t *testing.T) appsv1.DaemonSet {
	t.Helper()
	f, err := os.Open("../../../cluster/kubernetes/node-probe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var ds appsv1.DaemonSet
		err := dec.Decode(&ds)
		if errors.Is(err, io.EOF) {
			t.Fatal("cluster/kubernetes/node-probe.yaml has no DaemonSet")
		}
		if err != nil {
			t.Fatalf("cluster/kubernetes/node-probe.yaml: %v", err)
		}
		if ds.Kind == "DaemonSet" {
			return ds
		}
	}
}

// The manifest is what NodeProbes looks for, and runs the probe as the
// node needs it: in the host's PID and network namespaces, named after the
// pod's node, on the port it declares.
func TestProbeDaemonSetIsWhatNodeProbesFinds(t *testing.T) {
	ds := probeManifest(t)
	if ds.Namespace != orchestrator.KubernetesProbeNamespace || ds.Name != orchestrator.NodeProbeJob {
		t.Errorf("DaemonSet %s/%s, NodeProbes reads %s/%s", ds.Namespace, ds.Name, orchestrator.KubernetesProbeNamespace, orchestrator.NodeProbeJob)
	}
	sel, err := labels.Parse(ProbeLabel)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("the pods' labels %v do not match %s", ds.Spec.Template.Labels, ProbeLabel)
	}
	spec := ds.Spec.Template.Spec
	if !spec.HostPID || !spec.HostNetwork {
		t.Errorf("hostPID %v, hostNetwork %v: the probe must see the node's processes and answer on its address", spec.HostPID, spec.HostNetwork)
	}
	pod := corev1.Pod{Spec: spec}
	pod.Name = "node-probe-x"
	port, err := probePort(pod)
	if err != nil || port != nodeprobe.DefaultPort {
		t.Errorf("port %d, %v; want %d", port, err, nodeprobe.DefaultPort)
	}
	c := spec.Containers[0]
	if !slices.Contains(c.Args, "node-probe") || !slices.Contains(c.Args, "--name=$(NODE_NAME)") ||
		!slices.Contains(c.Args, "--listen=$(NODE_IP):"+strconv.Itoa(port)) {
		t.Errorf("args %q: want the probe named after its node, on the node's address and port %d", c.Args, port)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["NODE_NAME"] != "spec.nodeName" || env["NODE_IP"] != "status.hostIP" {
		t.Errorf("downward API %v: want NODE_NAME from spec.nodeName and NODE_IP from status.hostIP", env)
	}
	if sc := c.SecurityContext; sc == nil || (sc.Privileged != nil && *sc.Privileged) {
		t.Error("the probe must not be a privileged container (the API server refuses them)")
	}
	// the node's cgroups, and Docker's records of its containers (a Nomad
	// or Swarm task on the same node is found by its environment there)
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	for _, want := range []struct{ flag, hostPath, under string }{
		{"--cgroup-root=", "/sys/fs/cgroup", ""},
		{"--docker-root=", "/var/lib/docker/containers", "/containers"},
	} {
		var root string
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, want.flag); ok {
				root = v
			}
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			mounted = mounted || (root != "" && m.MountPath == root+want.under && m.ReadOnly && hostPaths[m.Name] == want.hostPath)
		}
		if !mounted {
			t.Errorf("%s%q: the node's %s is not a read-only mount of the pod there", want.flag, root, want.hostPath)
		}
	}
}

func TestProbePortNeedsTheNamedPort(t *testing.T) {
	pod := corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}}}}
	pod.Name = "p"
	if _, err := probePort(pod); err == nil || !strings.Contains(err.Error(), `no port "probe"`) {
		t.Errorf("a pod without the probe port: %v", err)
	}
}
