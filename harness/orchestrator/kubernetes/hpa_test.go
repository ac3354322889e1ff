package kubernetes

import (
	"context"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// A group's policy becomes an HPA of its workload: its min, max and CPU
// target, the cooldown as the scale-down stabilisation window; a group
// without one has none.
func TestHPAOfAnAutoscaledGroup(t *testing.T) {
	plan := &translate.Plan{Job: "taewa-baseline"}
	svc := &translate.Service{Name: "taewa-baseline-taewa", Group: "taewa", Task: "taewa",
		Autoscale: &contract.Autoscale{Group: "taewa", Min: 1, Max: 4, TargetCPU: 0.7, Cooldown: 30 * time.Second, Evaluation: 10 * time.Second}}
	h := hpaOf(plan, svc, "orchbench-taewa-baseline", "Deployment")
	if h == nil {
		t.Fatal("no HPA")
	}
	s := h.Spec
	if s.ScaleTargetRef.Kind != "Deployment" || s.ScaleTargetRef.Name != svc.Name || *s.MinReplicas != 1 || s.MaxReplicas != 4 {
		t.Errorf("target %+v, min %d, max %d", s.ScaleTargetRef, *s.MinReplicas, s.MaxReplicas)
	}
	if len(s.Metrics) != 1 || s.Metrics[0].Resource == nil || s.Metrics[0].Resource.Name != "cpu" || *s.Metrics[0].Resource.Target.AverageUtilization != 70 {
		t.Errorf("metrics %+v, want CPU at 70 %% of the requests", s.Metrics)
	}
	if w := s.Behavior.ScaleDown.StabilizationWindowSeconds; w == nil || *w != 30 {
		t.Errorf("scale-down window %v, want the 30 s cooldown", w)
	}
	if h.Labels[LabelGroup] != "taewa" {
		t.Errorf("labels %v: ScaleState finds the HPA by its group", h.Labels)
	}
	svc.Autoscale = nil
	if hpaOf(plan, svc, "ns", "Deployment") != nil {
		t.Error("an HPA for a group without a policy")
	}
}

// The samples and the HPA's reason for not scaling are the window's only:
// a reason an earlier step's HPA gave is not this step's.
func TestMetricSamplesAreTheWindowsOnly(t *testing.T) {
	t0 := time.Unix(1000, 0)
	o := &Orchestrator{hpaReadings: map[string][]hpaReading{"j": {
		{at: t0, note: "FailedGetResourceMetric: earlier"},
		{at: t0.Add(100 * time.Second), value: 40},
		{at: t0.Add(101 * time.Second), value: 90},
	}}}
	d := &orchestrator.Deployment{Job: "j"}
	got, _ := o.MetricSamples(context.Background(), d, contract.Autoscale{}, t0.Add(50*time.Second), t0.Add(200*time.Second))
	if got.Count != 2 || got.Last != 90 || got.Max != 90 || got.Note != "" {
		t.Fatalf("samples %+v, want 2, last and max 90, no note", got)
	}
	got, _ = o.MetricSamples(context.Background(), d, contract.Autoscale{}, t0, t0.Add(10*time.Second))
	if got.Count != 0 || got.Note != "FailedGetResourceMetric: earlier" {
		t.Fatalf("samples %+v, want none and the HPA's reason", got)
	}
}
