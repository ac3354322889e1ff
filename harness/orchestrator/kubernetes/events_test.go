package kubernetes

import (
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodEventsTranslated(t *testing.T) {
	since := time.Unix(1000, 0)
	at := func(s int64) metav1.Time { return metav1.NewTime(time.Unix(s, 0)) }
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "ferretdb-0", CreationTimestamp: at(900), Labels: map[string]string{LabelGroup: "ferretdb", LabelTask: "ferretdb"}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name:                 "ferretdb",
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(1013)}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(1012), ExitCode: 137, Reason: "OOMKilled"}},
		}}},
	}
	got := podEvents(pod, since)
	orchestrator.SortEvents(got)
	if len(got) != 2 || got[0].Kind != orchestrator.EventOOMKilled || got[1].Kind != orchestrator.EventStarted {
		t.Fatalf("events %+v, want an OOM kill then a start (the pod's creation is before the step)", got)
	}
	if got[0].Detail != "exit code 137, OOMKilled" || got[0].Group != "ferretdb" || got[0].Instance != "ferretdb-0" {
		t.Errorf("%+v", got[0])
	}
	if late := podEvents(pod, time.Unix(2000, 0)); len(late) != 0 {
		t.Errorf("events after the step's start: %+v", late)
	}
}
