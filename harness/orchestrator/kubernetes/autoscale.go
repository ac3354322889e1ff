package kubernetes

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetricsServerVersion is the metrics-server cluster/versions.env pins.
const MetricsServerVersion = "v0.8.0"

// Scaler names the HorizontalPodAutoscaler and its metric source.
func (o *Orchestrator) Scaler() string {
	return "Kubernetes HorizontalPodAutoscaler (metrics-server " + MetricsServerVersion + ")"
}

// hpaReading is what the HPA reported when ScaleState looked: the CPU
// utilisation it computed, or why it could not scale (note).
type hpaReading struct {
	at    time.Time
	value float64
	note  string
}

// groupHPA finds the HPA of the policy's group in the job's namespace.
func (o *Orchestrator) groupHPA(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	ns := namespaceOf(d.Job)
	list, err := o.client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelGroup + "=" + labelValue(as.Group)})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: horizontal pod autoscalers of %s: %w", ns, err)
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("kubernetes: %d horizontal pod autoscalers of group %s in %s, want 1", len(list.Items), as.Group, ns)
	}
	return &list.Items[0], nil
}

// ScaleState reads the workload's replicas, its pods running and ready
// (ready is what its Services route to), and notes the utilisation the HPA
// last computed, the samples MetricSamples counts.
func (o *Orchestrator) ScaleState(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale) (orchestrator.ScaleState, error) {
	st := orchestrator.ScaleState{At: time.Now()}
	hpa, err := o.groupHPA(ctx, d, as)
	if err != nil {
		return st, err
	}
	ns, name := hpa.Namespace, hpa.Spec.ScaleTargetRef.Name
	switch hpa.Spec.ScaleTargetRef.Kind {
	case "StatefulSet":
		s, err := o.client.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return st, err
		}
		st.Desired = int(deref(s.Spec.Replicas))
	default:
		dep, err := o.client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return st, err
		}
		st.Desired = int(deref(dep.Spec.Replicas))
	}
	pods, err := o.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelService + "=" + name})
	if err != nil {
		return st, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		st.Running++
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				st.Serving++
			}
		}
	}
	var seen []hpaReading
	for _, c := range hpa.Status.Conditions {
		if c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionFalse {
			seen = append(seen, hpaReading{at: st.At, note: c.Reason + ": " + c.Message})
		}
	}
	for _, m := range hpa.Status.CurrentMetrics {
		if m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			seen = append(seen, hpaReading{at: st.At, value: float64(*m.Resource.Current.AverageUtilization)})
		}
	}
	o.mu.Lock()
	o.hpaReadings[d.Job] = append(o.hpaReadings[d.Job], seen...)
	o.mu.Unlock()
	return st, nil
}

// newSize reads the HPA's rescale message: "New size: 3; reason: ...".
var newSize = regexp.MustCompile(`^New size: (\d+); reason: (.*)$`)

// ScaleEvents reads the HPA's rescale events, oldest first; each one's
// from is the size before it (the policy's min before the first).
// Kubernetes stamps events to the second and folds repeats into one with
// a count: a repeated rescale to one size is read at its first and its
// last time.
func (o *Orchestrator) ScaleEvents(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale, since time.Time) ([]orchestrator.ScaleEvent, error) {
	hpa, err := o.groupHPA(ctx, d, as)
	if err != nil {
		return nil, err
	}
	list, err := o.client.CoreV1().Events(hpa.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=" + hpa.Name})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: events of %s/%s: %w", hpa.Namespace, hpa.Name, err)
	}
	type rescale struct {
		at     time.Time
		to     int
		reason string
		failed bool
	}
	var all []rescale
	for _, e := range list.Items {
		if e.Reason != "SuccessfulRescale" && e.Reason != "FailedRescale" {
			continue
		}
		m := newSize.FindStringSubmatch(e.Message)
		if m == nil {
			continue
		}
		to, _ := strconv.Atoi(m[1])
		r := rescale{at: e.LastTimestamp.Time, to: to, reason: m[2], failed: e.Reason == "FailedRescale"}
		if r.at.IsZero() {
			r.at = e.EventTime.Time
		}
		all = append(all, r)
		if e.Count > 1 && !e.FirstTimestamp.IsZero() && !e.FirstTimestamp.Time.Equal(r.at) {
			first := r
			first.at = e.FirstTimestamp.Time
			all = append(all, first)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	var out []orchestrator.ScaleEvent
	from := as.Min
	for _, r := range all {
		if !r.at.Before(since.Truncate(time.Second)) {
			out = append(out, orchestrator.ScaleEvent{At: r.at, From: from, To: r.to, By: orchestrator.ScaledByAutoscaler, Reason: r.reason, Error: r.failed})
		}
		if !r.failed {
			from = r.to
		}
	}
	return out, nil
}

// MetricSamples counts the CPU utilisations the HPA reported (from
// metrics-server) while ScaleState sampled it between from and to, with
// the last reason it gave there for not scaling: an HPA without them could
// not decide on CPU.
func (o *Orchestrator) MetricSamples(ctx context.Context, d *orchestrator.Deployment, as contract.Autoscale, from, to time.Time) (orchestrator.MetricSamples, error) {
	out := orchestrator.MetricSamples{Source: "metrics-server through the HPA's status", Query: "cpu averageUtilization of the pods' requests"}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.hpaReadings[d.Job] {
		if r.at.Before(from) || r.at.After(to) {
			continue
		}
		if r.note != "" {
			out.Note = r.note
			continue
		}
		out.Count++
		out.Last = r.value
		out.Max = max(out.Max, r.value)
	}
	return out, nil
}
