// Package kubernetes runs the packs' rendered Nomad jobs on Kubernetes, as
// the Swarm adapter does on Swarm: the job stays the single source of
// truth, package translate reads it with the same rules for every target,
// and this package turns each task group into Kubernetes objects:
//
//   - a Deployment per group, or a StatefulSet when its env needs Nomad's
//     alloc index (only a StatefulSet numbers its pods), with requests
//     equal to limits from the declared cores and MiB, so the kernel
//     enforces exactly what the limits gate compares on every orchestrator;
//     the alloc data dir is an emptyDir, kept across container restarts
//     and empty in a new pod, as Nomad's is in a new allocation;
//   - a ClusterIP Service per Consul service name, for discovery by DNS;
//   - a NodePort Service for the measured entry, which the load generator
//     aims at on the node (never a port-forward or a proxy);
//   - readiness probes from the pack's checks, run by the kubelet from
//     outside the container, as Consul checks a Nomad task.
//
// Every job gets a namespace of its own, orchbench-<job>, and Stop deletes it.
package kubernetes

import (
	"io"
	"sync"
	"time"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"k8s.io/client-go/kubernetes"
)

// Name is the adapter's name in specs and records.
const Name = "kubernetes"

// Labels on every object the adapter creates.
const (
	LabelJob     = "orchbench.io/job"
	LabelGroup   = "orchbench.io/group"
	LabelTask    = "orchbench.io/task"
	LabelService = "orchbench.io/service"
	LabelVersion = "orchbench.io/version"
	// AnnotationDeclared holds the task's declaration (contract.Task as
	// JSON) on each pod, so an instance carries what it was meant to get.
	AnnotationDeclared = "orchbench.io/declared"
)

func init() {
	orchestrator.Register(Name, func(cfg orchestrator.Config) (orchestrator.Orchestrator, error) {
		return New(DefaultAccess(), cfg)
	})
}

var _ orchestrator.APIEndpoint = (*Orchestrator)(nil)

// Orchestrator is the Kubernetes adapter.
type Orchestrator struct {
	access   Access
	client   *kubernetes.Clientset
	progress io.Writer
	load     *LoadRunner
	// apiServer is the URL the kubeconfig names (a balancer, or the one server)
	apiServer string
	// poll is how often state is polled while waiting.
	poll time.Duration
	// nodes reads the kernel of the node a pod runs on.
	nodes nodeprobe.Resolver

	mu sync.Mutex
	// deployedAt is when each job's current definition was applied: pods
	// that failed before it belong to an earlier definition.
	deployedAt map[string]time.Time
	// hpaReadings are what each job's HPA reported, as ScaleState read
	// it (autoscale.go).
	hpaReadings map[string][]hpaReading
}

// New connects to the cluster.
func New(a Access, cfg orchestrator.Config) (*Orchestrator, error) {
	c, server, err := connect(a)
	if err != nil {
		return nil, err
	}
	o := &Orchestrator{access: a, client: c, apiServer: server, progress: cfg.Progress, poll: 500 * time.Millisecond, deployedAt: map[string]time.Time{}, nodes: cfg.Nodes,
		hpaReadings: map[string][]hpaReading{}}
	o.load = &LoadRunner{o: o, Image: cfg.LoadImage}
	return o, nil
}

// APIEndpoint is the API address the kubeconfig names.
func (o *Orchestrator) APIEndpoint() (string, string) {
	return EnvKubeconfig + " server", o.apiServer
}

// Name is "kubernetes".
func (o *Orchestrator) Name() string { return Name }

// LoadRunner runs the load generator as a Kubernetes Job on the node's network.
func (o *Orchestrator) LoadRunner() orchestrator.LoadRunner { return o.load }

// namespaceOf is the namespace a job's objects live in.
func namespaceOf(job string) string { return "orchbench-" + job }
