package kubernetes

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// target is what Kubernetes enforces here: a CPU quota (a limit) or, for
// shares, a request that only weighs the container against others. Whole
// exclusive cores need the static CPU manager, which the embedded node
// does not run.
var target = translate.Target{
	Name:       "Kubernetes",
	Revision:   "1",
	CPUModes:   []contract.CPUMode{contract.CPUModeQuota, contract.CPUModeShares},
	Network:    "the pod network, each replica with an address of its own",
	Autoscaler: "a HorizontalPodAutoscaler (metrics-server's CPU of the pods' requests; the cooldown as its scale-down stabilisation window; the evaluation interval is the controller manager's, 10 s)",
}

// entryService names the NodePort Service the load generator is aimed at.
const entryService = "orchbench-entry"

// indexEnv carries a StatefulSet pod's ordinal into env values that name
// Nomad's alloc index; values refer to it as $(ORCHBENCH_ALLOC_INDEX).
const indexEnv = "ORCHBENCH_ALLOC_INDEX"

// objects are what one plan becomes.
type objects struct {
	Namespace    string
	Deployments  []*appsv1.Deployment
	StatefulSets []*appsv1.StatefulSet
	Services     []*corev1.Service
	// HPAs autoscale the workloads of groups with a scaling policy (hpa.go).
	HPAs []*autoscalingv2.HorizontalPodAutoscaler
}

// build turns a plan into Kubernetes objects.
func build(plan *translate.Plan) (*objects, error) {
	ns := namespaceOf(plan.Job)
	out := &objects{Namespace: ns}
	for _, svc := range plan.Services {
		pod, stateful, err := podTemplate(plan, svc)
		if err != nil {
			return nil, err
		}
		meta := metav1.ObjectMeta{Name: svc.Name, Namespace: ns, Labels: labelsOf(plan, svc)}
		replicas := int32(svc.Replicas)
		selector := &metav1.LabelSelector{MatchLabels: map[string]string{LabelJob: plan.Job, LabelService: svc.Name}}
		maxUnavailable := intstr.FromInt32(int32(max(1, svc.UpdateParallelism)))
		kind := "Deployment"
		if stateful {
			kind = "StatefulSet"
		}
		if hpa := hpaOf(plan, svc, ns, kind); hpa != nil {
			out.HPAs = append(out.HPAs, hpa)
		}
		if stateful {
			out.StatefulSets = append(out.StatefulSets, &appsv1.StatefulSet{
				ObjectMeta: meta,
				Spec: appsv1.StatefulSetSpec{
					Replicas: &replicas, Selector: selector, Template: pod, ServiceName: svc.Name,
					// replicas are independent: none waits for another to be ready
					PodManagementPolicy: appsv1.ParallelPodManagement,
				},
			})
		} else {
			zero := intstr.FromInt32(0)
			out.Deployments = append(out.Deployments, &appsv1.Deployment{
				ObjectMeta: meta,
				Spec: appsv1.DeploymentSpec{
					Replicas: &replicas, Selector: selector, Template: pod,
					// stop first, as Nomad and the Swarm adapter update: a
					// miniature has no room for a surge
					Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
						RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &zero}},
				},
			})
		}
		out.Services = append(out.Services, discovery(plan, svc)...)
	}
	if plan.Entry != nil {
		svc := plan.Service(plan.Entry.Service)
		if svc == nil {
			return nil, fmt.Errorf("kubernetes: job %s: the entry %s is not a service of the job", plan.Job, plan.Entry.Service)
		}
		out.Services = append(out.Services, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: entryService, Namespace: ns, Labels: labelsOf(plan, svc)},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeNodePort,
				Selector: map[string]string{LabelJob: plan.Job, LabelService: svc.Name},
				Ports:    []corev1.ServicePort{{Name: "entry", Port: int32(plan.Entry.Port), TargetPort: intstr.FromInt32(int32(plan.Entry.Port))}},
			},
		})
	}
	return out, nil
}

func labelsOf(plan *translate.Plan, svc *translate.Service) map[string]string {
	return map[string]string{LabelJob: plan.Job, LabelGroup: labelValue(svc.Group), LabelTask: labelValue(svc.Task),
		LabelService: svc.Name, LabelVersion: plan.Version}
}

// discovery is one ClusterIP Service per Consul name of the group, each
// with every port of the group, so an upstream found by name answers on the
// port the job's templates give it.
func discovery(plan *translate.Plan, svc *translate.Service) []*corev1.Service {
	var ports []corev1.ServicePort
	for _, label := range slices.Sorted(maps.Keys(svc.Ports)) {
		p := int32(svc.Ports[label])
		ports = append(ports, corev1.ServicePort{Name: portName(label), Port: p, TargetPort: intstr.FromInt32(p)})
	}
	if len(ports) == 0 {
		return nil
	}
	var out []*corev1.Service
	for _, name := range svc.Consul {
		out = append(out, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespaceOf(plan.Job), Labels: labelsOf(plan, svc)},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeClusterIP,
				Selector: map[string]string{LabelJob: plan.Job, LabelService: svc.Name},
				Ports:    ports,
			},
		})
	}
	return out
}

// podTemplate is the group's pod; stateful says it needs a StatefulSet
// (an instance index in its env).
func podTemplate(plan *translate.Plan, svc *translate.Service) (corev1.PodTemplateSpec, bool, error) {
	c := svc.Container
	declared, err := json.Marshal(svc.Declared)
	if err != nil {
		return corev1.PodTemplateSpec{}, false, err
	}
	res, err := resourcesOf(plan, svc)
	if err != nil {
		return corev1.PodTemplateSpec{}, false, err
	}
	container := corev1.Container{
		Name: labelValue(svc.Task), Image: c.Image, ImagePullPolicy: pullPolicy(c.Image),
		Command: c.Entrypoint, Args: c.Args, WorkingDir: c.WorkDir, Resources: res,
	}
	stateful := false
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		v := c.Env[k]
		if strings.Contains(v, translate.AllocIndex) {
			stateful = true
		}
		// $(VAR) refers to another variable in Kubernetes; a literal $( is $$(
		literal := func(s string) string { return strings.ReplaceAll(s, "$(", "$$(") }
		container.Env = append(container.Env, corev1.EnvVar{Name: k, Value: translate.ExpandIndex(v, literal, "$("+indexEnv+")")})
	}
	if stateful {
		index := corev1.EnvVar{Name: indexEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}}
		container.Env = append([]corev1.EnvVar{index}, container.Env...)
	}
	for _, label := range slices.Sorted(maps.Keys(svc.Ports)) {
		container.Ports = append(container.Ports, corev1.ContainerPort{Name: portName(label), ContainerPort: int32(svc.Ports[label])})
	}
	if c.User != "" {
		uid, err := strconv.ParseInt(c.User, 10, 64)
		if err != nil {
			return corev1.PodTemplateSpec{}, false, fmt.Errorf("kubernetes: job %s, group %s: user %q: Kubernetes runs a container as a numeric user ID only", plan.Job, svc.Group, c.User)
		}
		container.SecurityContext = &corev1.SecurityContext{RunAsUser: &uid}
	}
	if svc.Check != nil {
		probe, err := readiness(plan, svc)
		if err != nil {
			return corev1.PodTemplateSpec{}, false, err
		}
		container.ReadinessProbe = probe
	}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{container},
		// the apps never talk to the API server
		AutomountServiceAccountToken: ptr(false),
		EnableServiceLinks:           ptr(false),
	}
	if c.StopGrace != nil {
		spec.TerminationGracePeriodSeconds = ptr(int64(math.Ceil(c.StopGrace.Seconds())))
	}
	if svc.UsesAllocDir {
		// Nomad's alloc dir: kept across restarts of the task, empty in a new instance
		spec.Volumes = []corev1.Volume{{Name: "alloc-data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "alloc-data", MountPath: translate.AllocDataDir}}
	}
	if svc.Placement.MaxPerNode == 1 {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelJob: plan.Job, LabelService: svc.Name}},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}}
	} else if svc.Placement.MaxPerNode > 1 {
		return corev1.PodTemplateSpec{}, false, fmt.Errorf("kubernetes: job %s, group %s: at most %d replicas per node cannot be expressed (only one per node)", plan.Job, svc.Group, svc.Placement.MaxPerNode)
	}
	if na := notOnAffinity(svc.Placement.NotOn); na != nil {
		if spec.Affinity == nil {
			spec.Affinity = &corev1.Affinity{}
		}
		spec.Affinity.NodeAffinity = na
	}
	podLabels := labelsOf(plan, svc)
	// the pod's version is its service's alone: a change elsewhere in the
	// job must not restart it (and empty its store), as Nomad updates only
	// the groups that changed
	podLabels[LabelVersion] = svc.Version() + "-" + target.Revision
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{AnnotationDeclared: string(declared)}},
		Spec:       spec,
	}, stateful, nil
}

// resourcesOf sets requests equal to limits from the declaration, so the
// pod is Guaranteed where the pack declares a cap and the kernel enforces
// exactly it. A task without a cap gets a CPU request of its weight: with
// none, the kernel would give it the smallest weight there is. Kubernetes counts CPU in whole millicores: a declaration
// between two is rounded to the nearer, which the limits gate sees.
func resourcesOf(plan *translate.Plan, svc *translate.Service) (corev1.ResourceRequirements, error) {
	d := svc.Declared
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	if d.Cores > 0 {
		milli := int64(math.Round(d.Cores * 1000))
		if milli < 1 {
			return r, fmt.Errorf("kubernetes: job %s, group %s: %g cores is below Kubernetes' smallest CPU limit (1m)", plan.Job, svc.Group, d.Cores)
		}
		q := *resource.NewMilliQuantity(milli, resource.DecimalSI)
		r.Requests[corev1.ResourceCPU], r.Limits[corev1.ResourceCPU] = q, q
	} else if d.WeightCores > 0 {
		// shares: no cap, a request that weighs the container as the pack does
		r.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(max(1, int64(math.Round(d.WeightCores*1000))), resource.DecimalSI)
	}
	if d.MemoryMiB > 0 {
		q := resource.MustParse(fmt.Sprintf("%dMi", d.MemoryMiB))
		r.Requests[corev1.ResourceMemory], r.Limits[corev1.ResourceMemory] = q, q
	}
	return r, nil
}

// readiness is the pack's check as the kubelet runs it: from outside the
// container, in the pod's network namespace, on the container's port.
func readiness(plan *translate.Plan, svc *translate.Service) (*corev1.Probe, error) {
	c := svc.Check
	_, portText, ok := strings.Cut(c.Address, ":")
	port, err := strconv.Atoi(portText)
	if !ok || err != nil {
		return nil, fmt.Errorf("kubernetes: job %s, group %s: check address %q has no port", plan.Job, svc.Group, c.Address)
	}
	p := &corev1.Probe{PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1}
	if c.Interval > 0 {
		p.PeriodSeconds = int32(max(1, math.Round(c.Interval.Seconds())))
	}
	if c.Timeout > 0 {
		p.TimeoutSeconds = int32(max(1, math.Round(c.Timeout.Seconds())))
	}
	switch c.Type {
	case "http":
		p.HTTPGet = &corev1.HTTPGetAction{Path: c.Path, Port: intstr.FromInt32(int32(port))}
	case "tcp":
		p.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}
	default:
		return nil, fmt.Errorf("kubernetes: job %s, group %s: check type %q is not supported", plan.Job, svc.Group, c.Type)
	}
	return p, nil
}

// portName makes a port label a valid port name (lower case, at most 15
// characters, letters, digits and dashes).
func portName(label string) string {
	s := strings.ToLower(strings.ReplaceAll(label, "_", "-"))
	if len(s) > 15 {
		s = s[:15]
	}
	return strings.Trim(s, "-")
}

// pullPolicy: an image named at a registry (host[:port]/..., as
// ORCHBENCH_REGISTRY names the project's on the emulated nodes) is pulled
// when the node lacks it; one named without (orchbench/taewa:local) was
// imported into the node's runtime and must never be looked for elsewhere.
func pullPolicy(image string) corev1.PullPolicy {
	first, _, found := strings.Cut(image, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return corev1.PullIfNotPresent
	}
	return corev1.PullNever
}

// notOnAffinity: node labels a pod's node must not carry with a value, as a
// required node affinity (NotIn matches a node without the label too, as
// Nomad's != does); nil for none.
func notOnAffinity(notOn []translate.NodeLabel) *corev1.NodeAffinity {
	if len(notOn) == 0 {
		return nil
	}
	var exprs []corev1.NodeSelectorRequirement
	for _, l := range notOn {
		exprs = append(exprs, corev1.NodeSelectorRequirement{Key: l.Key, Operator: corev1.NodeSelectorOpNotIn, Values: []string{l.Value}})
	}
	return &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}},
	}}
}
