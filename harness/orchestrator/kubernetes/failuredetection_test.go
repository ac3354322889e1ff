package kubernetes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The record says what decides when a lost node's pods move: the grace as
// the cluster published it and the tolerations admission gave a new pod;
// what is not published or not admitted is said, never left blank or
// passed off as a value the cluster runs.
func TestFailureDetectionWordsTheNodeLossSettings(t *testing.T) {
	secs := func(s int64) *int64 { return &s }
	admitted := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(20)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs(25)},
		// a toleration of the pod's own, not the node-loss default
		{Key: "orchbench.role", Value: "client", Effect: corev1.TaintEffectNoSchedule},
	}
	published := &corev1.ConfigMap{Data: map[string]string{nodeLossGraceKey: "20s"}}
	got := failureDetection(admitted, published)
	want := map[string]string{fdGrace: "20s", fdNotReady: "20s", fdUnreachable: "25s"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("keys %v, want %v", got, want)
	}

	bare := failureDetection(nil, nil)
	if !strings.HasPrefix(bare[fdGrace], defaultNodeMonitorGrace+" (Kubernetes' default") {
		t.Errorf("an unpublished grace: %q", bare[fdGrace])
	}
	for _, k := range []string{fdNotReady, fdUnreachable} {
		if !strings.HasPrefix(bare[k], "none") {
			t.Errorf("no toleration admitted: %s = %q", k, bare[k])
		}
	}
	if emptyMap := failureDetection(nil, &corev1.ConfigMap{}); !strings.Contains(emptyMap[fdGrace], "has no "+nodeLossGraceKey) {
		t.Errorf("a ConfigMap without the key: %q", emptyMap[fdGrace])
	}
}
