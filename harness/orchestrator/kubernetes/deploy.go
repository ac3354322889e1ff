package kubernetes

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/orchbench/orchbench/harness/hostinfo"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// annotationGeneration on a job's namespace counts its definitions, as
// Nomad numbers job versions.
const annotationGeneration = "orchbench.io/generation"

// Translate reads a job as this adapter deploys it.
func Translate(w orchestrator.Workload, mhzPerCore float64) (*translate.Plan, error) {
	return translate.Translate(w.Job, translate.Options{MHzPerCore: mhzPerCore, Target: target})
}

// Deploy translates the job and applies its objects, unless every object
// of the job already carries this plan's version: then the running
// deployment is reused and its stores keep their data.
func (o *Orchestrator) Deploy(ctx context.Context, w orchestrator.Workload) (*orchestrator.Deployment, error) {
	plan, err := Translate(w, hostinfo.MHz())
	if err != nil {
		return nil, err
	}
	objs, err := build(plan)
	if err != nil {
		return nil, err
	}
	d := &orchestrator.Deployment{Orchestrator: Name, Job: plan.Job, App: w.App}
	current, err := o.upToDate(ctx, plan.Job, objs, plan.Version)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	if !current {
		if err := o.apply(ctx, objs); err != nil {
			return nil, err
		}
		d.Fresh = true
		o.mu.Lock()
		o.deployedAt[plan.Job] = began
		o.mu.Unlock()
		if o.progress != nil {
			fmt.Fprintf(o.progress, "job %s: applied version %s in namespace %s\n", plan.Job, plan.Version, objs.Namespace)
		}
	}
	if d.Version, err = o.generation(ctx, objs.Namespace, d.Fresh); err != nil {
		return nil, err
	}
	return d, nil
}

// upToDate is true when every workload of the plan exists at version:
// then the running deployment is the plan's.
func (o *Orchestrator) upToDate(ctx context.Context, job string, objs *objects, version string) (bool, error) {
	running, err := o.jobWorkloads(ctx, job)
	if err != nil {
		return false, err
	}
	at := map[string]string{}
	for _, w := range running {
		at[w.name] = w.version
	}
	wanted := 0
	for _, d := range objs.Deployments {
		wanted++
		if at[d.Name] != version {
			return false, nil
		}
	}
	for _, s := range objs.StatefulSets {
		wanted++
		if at[s.Name] != version {
			return false, nil
		}
	}
	return wanted > 0, nil
}

// apply creates or replaces every object of the plan and deletes the
// job's objects the plan no longer has.
func (o *Orchestrator) apply(ctx context.Context, objs *objects) error {
	if err := o.ensureNamespace(ctx, objs.Namespace); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, s := range objs.Services {
		keep["service/"+s.Name] = true
		if err := upsert(ctx, s.Name, func() error {
			_, err := o.client.CoreV1().Services(objs.Namespace).Create(ctx, s, metav1.CreateOptions{})
			return err
		}, func() error {
			cur, err := o.client.CoreV1().Services(objs.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			// a Service keeps its cluster IP and node port across updates
			s.ResourceVersion, s.Spec.ClusterIP, s.Spec.ClusterIPs = cur.ResourceVersion, cur.Spec.ClusterIP, cur.Spec.ClusterIPs
			for i := range s.Spec.Ports {
				for _, p := range cur.Spec.Ports {
					if p.Name == s.Spec.Ports[i].Name {
						s.Spec.Ports[i].NodePort = p.NodePort
					}
				}
			}
			_, err = o.client.CoreV1().Services(objs.Namespace).Update(ctx, s, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("kubernetes: service %s/%s: %w", objs.Namespace, s.Name, err)
		}
	}
	for _, dep := range objs.Deployments {
		keep["deployment/"+dep.Name] = true
		if err := upsert(ctx, dep.Name, func() error {
			_, err := o.client.AppsV1().Deployments(objs.Namespace).Create(ctx, dep, metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := o.client.AppsV1().Deployments(objs.Namespace).Update(ctx, dep, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("kubernetes: deployment %s/%s: %w", objs.Namespace, dep.Name, err)
		}
	}
	for _, sts := range objs.StatefulSets {
		keep["statefulset/"+sts.Name] = true
		if err := upsert(ctx, sts.Name, func() error {
			_, err := o.client.AppsV1().StatefulSets(objs.Namespace).Create(ctx, sts, metav1.CreateOptions{})
			return err
		}, func() error {
			_, err := o.client.AppsV1().StatefulSets(objs.Namespace).Update(ctx, sts, metav1.UpdateOptions{})
			if !apierrors.IsInvalid(err) {
				return err
			}
			// a field a StatefulSet cannot change: replace it
			if err := o.client.AppsV1().StatefulSets(objs.Namespace).Delete(ctx, sts.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			_, err = o.client.AppsV1().StatefulSets(objs.Namespace).Create(ctx, sts, metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("kubernetes: statefulset %s/%s: %w", objs.Namespace, sts.Name, err)
		}
	}
	for _, hpa := range objs.HPAs {
		keep["hpa/"+hpa.Name] = true
		if err := upsert(ctx, hpa.Name, func() error {
			_, err := o.client.AutoscalingV2().HorizontalPodAutoscalers(objs.Namespace).Create(ctx, hpa, metav1.CreateOptions{})
			return err
		}, func() error {
			cur, err := o.client.AutoscalingV2().HorizontalPodAutoscalers(objs.Namespace).Get(ctx, hpa.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			hpa.ResourceVersion = cur.ResourceVersion
			_, err = o.client.AutoscalingV2().HorizontalPodAutoscalers(objs.Namespace).Update(ctx, hpa, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("kubernetes: horizontal pod autoscaler %s/%s: %w", objs.Namespace, hpa.Name, err)
		}
	}
	return o.prune(ctx, objs.Namespace, keep)
}

// upsert creates an object, or updates it when it exists.
func upsert(ctx context.Context, name string, create, update func() error) error {
	err := create()
	if apierrors.IsAlreadyExists(err) {
		return update()
	}
	return err
}

// prune deletes the namespace's workloads and Services not in keep.
func (o *Orchestrator) prune(ctx context.Context, ns string, keep map[string]bool) error {
	deps, err := o.client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, d := range deps.Items {
		if !keep["deployment/"+d.Name] {
			if err := o.client.AppsV1().Deployments(ns).Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	sets, err := o.client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range sets.Items {
		if !keep["statefulset/"+s.Name] {
			if err := o.client.AppsV1().StatefulSets(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	hpas, err := o.client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, h := range hpas.Items {
		if !keep["hpa/"+h.Name] {
			if err := o.client.AutoscalingV2().HorizontalPodAutoscalers(ns).Delete(ctx, h.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	svcs, err := o.client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, s := range svcs.Items {
		if !keep["service/"+s.Name] {
			if err := o.client.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// generation reads, and after an apply advances, the namespace's count of definitions.
func (o *Orchestrator) generation(ctx context.Context, ns string, advance bool) (uint64, error) {
	n, err := o.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("kubernetes: namespace %s: %w", ns, err)
	}
	g, _ := strconv.ParseUint(n.Annotations[annotationGeneration], 10, 64)
	if !advance {
		return g, nil
	}
	g++
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[annotationGeneration] = strconv.FormatUint(g, 10)
	if _, err := o.client.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		return 0, fmt.Errorf("kubernetes: namespace %s: %w", ns, err)
	}
	return g, nil
}

// Revision names the running definition: the plan's version in the
// namespace of this creation (a namespace made again has a new UID, and
// its stores start empty).
func (o *Orchestrator) Revision(ctx context.Context, d *orchestrator.Deployment) (string, error) {
	ns := namespaceOf(d.Job)
	n, err := o.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("kubernetes: namespace %s: %w", ns, err)
	}
	running, err := o.jobWorkloads(ctx, d.Job)
	if err != nil {
		return "", err
	}
	if len(running) == 0 || running[0].version == "" {
		return "", fmt.Errorf("kubernetes: job %s has no workload in namespace %s", d.Job, ns)
	}
	return running[0].version + "-" + string(n.UID)[:8], nil
}

// Stop deletes the job's namespace and waits until it and its pods are
// gone, so the next deployment (on any orchestrator) has the machine.
func (o *Orchestrator) Stop(ctx context.Context, d *orchestrator.Deployment) error {
	ns := namespaceOf(d.Job)
	fg := metav1.DeletePropagationForeground
	err := o.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{PropagationPolicy: &fg})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kubernetes: delete namespace %s: %w", ns, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		_, err := o.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubernetes: namespace %s still terminating after 3m", ns)
		case <-time.After(o.poll):
		}
	}
}
