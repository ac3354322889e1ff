package kubernetes

import (
	"context"
	"fmt"

	"github.com/orchbench/orchbench/harness/orchestrator"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ orchestrator.ControlPlaneShape = (*Orchestrator)(nil)

// ControlPlaneServers counts the API servers: each one lists its own
// address among the endpoints of the default namespace's kubernetes
// Service while it runs (the lease reconciler drops one that stopped
// renewing), the way a client of the cluster can see its control plane.
// On the emulated nodes every server runs one beside its etcd member.
func (o *Orchestrator) ControlPlaneServers(ctx context.Context) (int, error) {
	list, err := o.client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		return 0, fmt.Errorf("kubernetes: endpoints of the kubernetes service: %w", err)
	}
	n := apiServers(list.Items)
	if n == 0 {
		return 0, fmt.Errorf("kubernetes: the kubernetes service lists no API server")
	}
	return n, nil
}

// apiServers is the number of distinct addresses the slices list.
func apiServers(slices []discoveryv1.EndpointSlice) int {
	seen := map[string]bool{}
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				seen[a] = true
			}
		}
	}
	return len(seen)
}
