package kubernetes

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workload is a job's Deployment or StatefulSet as the cluster holds it.
type workload struct {
	name     string
	version  string // the plan version it was applied from
	replicas int
	// podVersion is its pod template's version: pods of another are old
	podVersion string
}

// jobWorkloads lists the job's Deployments and StatefulSets.
func (o *Orchestrator) jobWorkloads(ctx context.Context, job string) ([]workload, error) {
	ns, opts := namespaceOf(job), metav1.ListOptions{LabelSelector: LabelJob + "=" + job}
	deps, err := o.client.AppsV1().Deployments(ns).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: job %s: list deployments: %w", job, err)
	}
	sets, err := o.client.AppsV1().StatefulSets(ns).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: job %s: list statefulsets: %w", job, err)
	}
	var out []workload
	for _, d := range deps.Items {
		out = append(out, workload{d.Name, d.Labels[LabelVersion], int(deref(d.Spec.Replicas)), d.Spec.Template.Labels[LabelVersion]})
	}
	for _, s := range sets.Items {
		out = append(out, workload{s.Name, s.Labels[LabelVersion], int(deref(s.Spec.Replicas)), s.Spec.Template.Labels[LabelVersion]})
	}
	return out, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
