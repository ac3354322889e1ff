package kubernetes

import (
	"fmt"
	"os"

	"github.com/orchbench/orchbench/harness/netns"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The embedded cluster (cluster/kubernetes.sh): its node lives in a network
// namespace of its own, whose loopback carries the node address, and its
// admin credentials are in the project's state directory.
const (
	EmbeddedNetNS      = "orchbench-k8s"
	EmbeddedKubeconfig = ".state/kubernetes/admin.kubeconfig"
)

// Environment variables that point the adapter at another cluster: a
// kubeconfig, and the network namespace its node addresses are reached in
// ("" or "host" for the harness's own).
const (
	EnvKubeconfig = "ORCHBENCH_KUBECONFIG"
	EnvNetNS      = "ORCHBENCH_K8S_NETNS"
)

// Access is where the cluster is and how it is reached.
type Access struct {
	Kubeconfig string
	NetNS      netns.Path
}

// DefaultAccess is the embedded cluster unless the environment names another.
func DefaultAccess() Access {
	a := Access{Kubeconfig: EmbeddedKubeconfig, NetNS: netns.Named(EmbeddedNetNS)}
	if k := os.Getenv(EnvKubeconfig); k != "" {
		a.Kubeconfig, a.NetNS = k, ""
	}
	if n, ok := os.LookupEnv(EnvNetNS); ok {
		switch n {
		case "", "host":
			a.NetNS = ""
		default:
			a.NetNS = netns.Named(n)
		}
	}
	return a
}

// connect builds a client whose every connection is opened inside the
// cluster's network namespace: the API server listens on the node address,
// which exists only there.
func connect(a Access) (*kubernetes.Clientset, error) {
	if _, err := os.Stat(a.Kubeconfig); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w (is the cluster up? just k8s-up)", a.Kubeconfig, err)
	}
	if a.NetNS != "" {
		if _, err := os.Stat(string(a.NetNS)); err != nil {
			return nil, fmt.Errorf("network namespace %s: %w (is the cluster up? just k8s-up)", a.NetNS, err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", a.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", a.Kubeconfig, err)
	}
	cfg.Dial = a.NetNS.Dial
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "orchbench"
	return kubernetes.NewForConfig(cfg)
}
