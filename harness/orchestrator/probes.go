package orchestrator

import (
	"context"
	"errors"

	"github.com/orchbench/orchbench/harness/nodeprobe"
)

// NodeProbeJob names the node probe's deployment on every orchestrator: the
// Nomad system job, the Swarm global service and the Kubernetes DaemonSet
// (in KubernetesProbeNamespace) that run `orchbench node-probe` on each node.
const NodeProbeJob = "node-probe"

// KubernetesProbeNamespace holds the probe's DaemonSet.
const KubernetesProbeNamespace = "orchbench-system"

// NodeProbePortLabel names the probe's port: the port label in the Nomad
// job, the container port's name in the DaemonSet.
const NodeProbePortLabel = "probe"

// ErrNoNodeProbes is an orchestrator without the probe's deployment.
var ErrNoNodeProbes = errors.New("the node probe is not deployed")

// ProbeFinder is an orchestrator that can say where the probe of each of
// its nodes answers, from the probe deployment's own instances: the
// harness then needs no address of any node.
type ProbeFinder interface {
	// NodeProbes gives a client of each running probe by the name this
	// orchestrator gives its node; ErrNoNodeProbes when it has no probe
	// deployment at all.
	NodeProbes(ctx context.Context) (map[string]*nodeprobe.Client, error)
}
