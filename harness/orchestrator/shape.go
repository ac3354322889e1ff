package orchestrator

import "context"

// ControlPlaneShape is implemented by an adapter that can tell how many
// servers its control plane has (Nomad's raft peers, Swarm's managers): an
// HA step (3 servers) or a non-HA one (1) is refused on the other shape.
type ControlPlaneShape interface {
	ControlPlaneServers(ctx context.Context) (int, error)
}

// FailureDetection is implemented by an adapter whose control plane has
// settings that decide how soon a lost node's work moves elsewhere (Nomad's
// heartbeat TTLs): a node fault's record carries them, since the recovery
// it measures is mostly their doing.
type FailureDetection interface {
	FailureDetection(ctx context.Context) (map[string]string, error)
}

// APIEndpoint is implemented by an adapter that reaches its control plane
// at one address set outside the variables the sweep reads (Kubernetes:
// the server its kubeconfig names): a node fault that takes that address
// cuts the harness off from the API, not only the cluster.
type APIEndpoint interface {
	// APIEndpoint is the setting that names the address, and the URL.
	APIEndpoint() (setting, url string)
}
