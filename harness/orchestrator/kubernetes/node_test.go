package kubernetes

import (
	"testing"

	"github.com/orchbench/orchbench/harness/placement"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The capacity a pack is sized against leaves out a node no application
// pod can land on (the client node's NoSchedule taint), keeps one whose
// taint only prefers pods elsewhere, and says so when no node is left.
func TestAppNodesLeaveOutTaintedNodes(t *testing.T) {
	node := func(name string, taints ...corev1.Taint) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	client := node("ks-client", corev1.Taint{Key: placement.NodeRole, Value: "client", Effect: corev1.TaintEffectNoSchedule})
	nodes := []corev1.Node{
		node("ks-worker1"),
		client,
		node("ks-worker2", corev1.Taint{Key: "busy", Effect: corev1.TaintEffectPreferNoSchedule}),
		node("ks-worker3", corev1.Taint{Key: "draining", Effect: corev1.TaintEffectNoExecute}),
	}
	got := appNodes(nodes)
	if len(got) != 2 || got[0].Name != "ks-worker1" || got[1].Name != "ks-worker2" {
		t.Errorf("application nodes %v", names(got))
	}
	if left := appNodes([]corev1.Node{client}); len(left) != 0 {
		t.Errorf("the client node alone: %v", names(left))
	}
	if why := taintsOf([]corev1.Node{client}); why != "ks-client: orchbench.role=client:NoSchedule" {
		t.Errorf("taints worded %q", why)
	}
}

func names(nodes []corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}
