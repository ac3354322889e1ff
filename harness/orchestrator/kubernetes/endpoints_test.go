package kubernetes

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/netns"
	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// entryPod is a pod of service svc; ready says whether its container runs
// and its readiness probe passes.
func entryPod(name, svc, ip string, ready bool) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelService: svc, LabelTask: "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
	}
	if ready {
		p.Status.Conditions[0].Status = corev1.ConditionTrue
	}
	return p
}

func entryOf(nodePort int32) corev1.Service {
	return corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
		Selector: map[string]string{LabelService: "web"},
		Ports:    []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromInt32(8080), NodePort: nodePort}}}}
}

// The entry comes first (the load aims at it), then every ready pod of the
// entry's service at PodIP:targetPort, named by the pod as Limits names it,
// reached through the node's namespace; not-ready pods and other services'
// pods are left out.
func TestEntryEndpointsListEveryReadyPodBehindTheNodePort(t *testing.T) {
	ns := netns.Named("orchbench-k8s")
	pods := []corev1.Pod{
		entryPod("web-b", "web", "10.244.0.12", true),
		entryPod("web-a", "web", "10.244.0.11", true),
		entryPod("web-c", "web", "10.244.0.13", false),
		entryPod("db-0", "db", "10.244.0.20", true),
	}
	eps, err := entryEndpoints(entryOf(30080), pods, "web", Access{NetNS: ns})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ep := range eps {
		got = append(got, ep.HostPort()+" "+ep.Instance+" "+string(ep.Entry)+" via "+string(ep.Via))
		if ep.NetNS != ns || ep.NodeNetNS() != ns || ep.Service != "web" || ep.Node != "node-1" {
			t.Errorf("%s: netns %q (the node's %q), service %q, node %q", ep.HostPort(), ep.NetNS, ep.NodeNetNS(), ep.Service, ep.Node)
		}
	}
	want := []string{"127.0.0.1:30080  node-port via ", "10.244.0.11:8080 web-a  via node-port", "10.244.0.12:8080 web-b  via node-port"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("endpoints\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	targets := orchestrator.LoadTargets(eps)
	if len(targets) != 1 || targets[0].Port != 30080 {
		t.Errorf("the load is aimed at %+v, want the NodePort alone", targets)
	}

	// through a client machine's namespace (the emulated nodes' client,
	// entered from the host) the harness dials there, and each node's
	// probe looks in the node's own
	client := netns.OfProcess(4242)
	eps, err = entryEndpoints(entryOf(30080), pods, "web", Access{NetNS: client, ViaClient: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if ep.NetNS != client || ep.NodeNetNS() != "" {
			t.Errorf("%s via the client: dialed in %q, the node's %q", ep.HostPort(), ep.NetNS, ep.NodeNetNS())
		}
	}
}

func TestEntryEndpointsRefuseAnEntryWithNothingBehindIt(t *testing.T) {
	for _, c := range []struct {
		name  string
		entry corev1.Service
		pods  []corev1.Pod
		want  string
	}{
		{"no pod ready", entryOf(30080), []corev1.Pod{entryPod("web-a", "web", "10.244.0.11", false)}, "no ready instance behind the entry web"},
		{"no node port yet", entryOf(0), []corev1.Pod{entryPod("web-a", "web", "10.244.0.11", true)}, "the entry web has no NodePort yet"},
		{"a ready pod without an address", entryOf(30080), []corev1.Pod{entryPod("web-a", "web", "", true)}, "pod web-a of the entry web is ready but has no address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			eps, err := entryEndpoints(c.entry, c.pods, "web", Access{})
			if err == nil || err.Error() != c.want {
				t.Fatalf("endpoints %+v, error %v; want %q", eps, err, c.want)
			}
		})
	}
}
