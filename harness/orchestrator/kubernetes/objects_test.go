package kubernetes

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
	corev1 "k8s.io/api/core/v1"
)

func mustBuild(t *testing.T, f tt.Fixture) (*objects, map[string]corev1.PodTemplateSpec) {
	t.Helper()
	job, err := f.Job()
	if err != nil {
		t.Fatal(err)
	}
	w, err := orchestrator.NewWorkload(job)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Translate(w, 2100)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	objs, err := build(plan)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	pods := map[string]corev1.PodTemplateSpec{}
	for _, d := range objs.Deployments {
		pods[d.Name] = d.Spec.Template
	}
	for _, s := range objs.StatefulSets {
		pods[s.Name] = s.Spec.Template
	}
	if len(pods) != f.Services {
		t.Fatalf("%s: %d workloads, want %d", f.Name, len(pods), f.Services)
	}
	return objs, pods
}

// Every capped task gets requests = limits = its declaration (a
// Guaranteed pod, whose cgroup holds exactly that), and the declaration
// rides on the pod for the limits gate; an uncapped store gets a request
// of its weight and no CPU limit.
func TestResourcesEqualTheDeclaration(t *testing.T) {
	for _, f := range tt.Fixtures {
		_, pods := mustBuild(t, f)
		for name, pod := range pods {
			var decl contract.Task
			if err := json.Unmarshal([]byte(pod.Annotations[AnnotationDeclared]), &decl); err != nil {
				t.Fatalf("%s/%s: declared annotation: %v", f.Name, name, err)
			}
			r := pod.Spec.Containers[0].Resources
			mem := r.Limits.Memory().Value() >> 20
			if decl.MemoryMiB > 0 && (mem != int64(decl.MemoryMiB) || !r.Requests.Memory().Equal(*r.Limits.Memory())) {
				t.Errorf("%s/%s: memory request %s limit %s, declared %d MiB", f.Name, name, r.Requests.Memory(), r.Limits.Memory(), decl.MemoryMiB)
			}
			switch {
			case decl.Cores > 0:
				if got := float64(r.Limits.Cpu().MilliValue()) / 1000; got != decl.Cores || !r.Requests.Cpu().Equal(*r.Limits.Cpu()) {
					t.Errorf("%s/%s: cpu request %s limit %s, declared %g cores", f.Name, name, r.Requests.Cpu(), r.Limits.Cpu(), decl.Cores)
				}
			default:
				if _, capped := r.Limits[corev1.ResourceCPU]; capped {
					t.Errorf("%s/%s: a CPU limit on a task declared uncapped (%s)", f.Name, name, decl.CPUMode)
				}
				if r.Requests.Cpu().MilliValue() < 1 {
					t.Errorf("%s/%s: no CPU request: the kernel would give it the smallest weight", f.Name, name)
				}
			}
		}
	}
}

// The entry is a NodePort Service of the measured service's port; every
// Consul name is a ClusterIP Service on the group's ports; readiness comes
// from the pack's check; a store keeps its data dir for the pod's life;
// a service that needs the instance index is a StatefulSet.
func TestObjectsOfTheSocialNetwork(t *testing.T) {
	objs, pods := mustBuild(t, tt.Fixtures[2])
	if objs.Namespace != "orchbench-social-network-ha" {
		t.Errorf("namespace %s", objs.Namespace)
	}
	byName := map[string]*corev1.Service{}
	for _, s := range objs.Services {
		byName[s.Name] = s
	}
	entry := byName[entryService]
	if entry == nil || entry.Spec.Type != corev1.ServiceTypeNodePort || entry.Spec.Selector[LabelService] != tt.Fixtures[2].Entry {
		t.Fatalf("entry service %+v", entry)
	}
	for _, consul := range []string{"social-network-ha-user", "social-network-ha-compose-post", "social-network-ha-redis"} {
		s := byName[consul]
		if s == nil {
			t.Fatalf("no service %s", consul)
		}
		if s.Spec.Type != corev1.ServiceTypeClusterIP || len(s.Spec.Ports) == 0 {
			t.Errorf("service %s: %+v", consul, s.Spec)
		}
	}
	front := pods[tt.Fixtures[2].Entry]
	if p := front.Spec.Containers[0].ReadinessProbe; p == nil || (p.HTTPGet == nil && p.TCPSocket == nil) {
		t.Errorf("frontend has no readiness probe: %+v", p)
	}
	// the stateless services number their replicas (MACHINE_ID is the
	// alloc index), which only a StatefulSet does; the stores do not
	stateful := map[string]bool{}
	for _, s := range objs.StatefulSets {
		stateful[s.Name] = true
		env := s.Spec.Template.Spec.Containers[0].Env
		if len(env) == 0 || env[0].Name != indexEnv || env[0].ValueFrom == nil {
			t.Errorf("statefulset %s: the index variable is not first: %+v", s.Name, env)
		}
		found := false
		for _, e := range env {
			if e.Name == "MACHINE_ID" && e.Value == "$("+indexEnv+")" {
				found = true
			}
		}
		if !found {
			t.Errorf("statefulset %s: MACHINE_ID is not the pod's index: %+v", s.Name, env)
		}
	}
	for _, name := range []string{"unique-id", "compose-post", "frontend"} {
		if !stateful["social-network-ha-"+name] {
			t.Errorf("%s is not a StatefulSet, so its replicas share one MACHINE_ID", name)
		}
	}
	for _, name := range []string{"ferretdb", "redis", "memcached"} {
		if stateful["social-network-ha-"+name] {
			t.Errorf("%s is a StatefulSet though it needs no index", name)
		}
	}
	for name, pod := range pods {
		if strings.HasSuffix(name, "ferretdb") {
			if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].EmptyDir == nil || pod.Spec.Containers[0].VolumeMounts[0].MountPath != "/alloc/data" {
				t.Errorf("ferretdb keeps no data dir: %+v", pod.Spec.Volumes)
			}
		}
		if pod.Spec.Containers[0].ImagePullPolicy != corev1.PullNever {
			t.Errorf("%s pulls images; none can be pulled here", name)
		}
		// The pack's flags reach the container as on Nomad.
		c := pod.Spec.Containers[0]
		if strings.HasPrefix(c.Image, "orchbench/socialnet:") && !strings.Contains(strings.Join(c.Args, " "), "--rpc-connections 512 --rpc-timeout 10s --rpc-call-timeout 30s") {
			t.Errorf("%s: args %q lack the Thrift pool's flags", name, c.Args)
		}
	}
}

// Scaling the job (scale=2) changes the replicas of the stateless
// services, not their pods' version, and leaves the stores' pods alone:
// an update must not restart a store and lose its data.
func TestScalingKeepsPodVersions(t *testing.T) {
	versions := func(scale int) map[string]string {
		job, err := tt.Fixtures[1].Job()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range job.TaskGroups {
			if *g.Count == 1 && !strings.Contains(*g.Name, "ferretdb") && !strings.Contains(*g.Name, "redis") && !strings.Contains(*g.Name, "memcached") {
				g.Count = tt.Ptr(scale)
			}
		}
		w, err := orchestrator.NewWorkload(job)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Translate(w, 2100)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := build(plan)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, d := range objs.Deployments {
			out[d.Name] = d.Spec.Template.Labels[LabelVersion]
		}
		for _, s := range objs.StatefulSets {
			out[s.Name] = s.Spec.Template.Labels[LabelVersion]
		}
		return out
	}
	one, two := versions(1), versions(2)
	for name, v := range one {
		if v == "" || two[name] != v {
			t.Errorf("%s: pod version %q at scale 1, %q at scale 2", name, v, two[name])
		}
	}
}

func TestPullPolicyFollowsTheRegistry(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"orchbench/taewa:local":                 corev1.PullNever,
		"redis:7":                               corev1.PullNever,
		"10.82.0.10:5000/orchbench/taewa:local": corev1.PullIfNotPresent,
		"docker.io/orchbench/coredns:local":     corev1.PullIfNotPresent,
		"localhost/orchbench/taewa:local":       corev1.PullIfNotPresent,
	} {
		if got := pullPolicy(image); got != want {
			t.Errorf("pullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}
