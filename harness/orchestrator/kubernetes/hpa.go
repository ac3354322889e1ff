package kubernetes

import (
	"math"

	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A group's scaling policy becomes a HorizontalPodAutoscaler of its
// workload: CPU utilisation of the pods' requests (each pod requests what
// it is capped at) held at the target, between min and max. The HPA's own
// algorithm decides (desired = ceil(replicas × utilisation / target), with
// its 10 % tolerance); the cooldown becomes its scale-down stabilisation
// window, and the evaluation interval is the controller manager's
// --horizontal-pod-autoscaler-sync-period, one for the whole cluster
// (cluster/kubernetes.sh sets it to 10 s, the policy's default).

// hpaOf is the service's autoscaler, nil when it has no policy.
func hpaOf(plan *translate.Plan, svc *translate.Service, ns, kind string) *autoscalingv2.HorizontalPodAutoscaler {
	as := svc.Autoscale
	if as == nil {
		return nil
	}
	minReplicas := int32(as.Min)
	utilisation := int32(math.Round(as.TargetCPU * 100))
	window := int32(as.Cooldown.Seconds())
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: ns, Labels: labelsOf(plan, svc)},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: kind, Name: svc.Name},
			MinReplicas:    &minReplicas,
			MaxReplicas:    int32(as.Max),
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &utilisation}},
			}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &window},
			},
		},
	}
}
