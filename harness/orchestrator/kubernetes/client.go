package kubernetes

import (
	"fmt"
	"os"
	"path/filepath"

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
// kubeconfig, the network namespace its node addresses are reached in
// ("" or "host" for the harness's own), and a client machine's namespace
// on this machine that the harness dials the cluster from (a path, as
// /proc/<pid>/ns/net, or a name made by `ip netns add`): the emulated
// nodes' client node, where pods' and Services' addresses are routed.
const (
	EnvKubeconfig  = "ORCHBENCH_KUBECONFIG"
	EnvNetNS       = "ORCHBENCH_K8S_NETNS"
	EnvClientNetNS = "ORCHBENCH_K8S_CLIENT_NETNS"
)

// Access is where the cluster is and how it is reached.
type Access struct {
	Kubeconfig string
	// NetNS is where the harness dials the cluster's addresses.
	NetNS netns.Path
	// ViaClient says NetNS is a client machine's namespace, not the nodes'
	// own: a node reaches its addresses in its own namespace, which is
	// what its probe must be asked with.
	ViaClient bool
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
	if c := os.Getenv(EnvClientNetNS); c != "" {
		a.NetNS, a.ViaClient = netns.Named(c), true
		if filepath.IsAbs(c) {
			a.NetNS = netns.Path(c)
		}
	}
	return a
}

// connect builds a client whose every connection is opened inside the
// cluster's network namespace: the API server listens on the node address,
// which exists only there. It returns the API's URL too.
func connect(a Access) (*kubernetes.Clientset, string, error) {
	if _, err := os.Stat(a.Kubeconfig); err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: %w (is the cluster up? just k8s-up)", a.Kubeconfig, err)
	}
	if a.NetNS != "" {
		if _, err := os.Stat(string(a.NetNS)); err != nil {
			if a.ViaClient {
				return nil, "", fmt.Errorf("%s=%s: %w (is the client node up? eval \"$(cluster/nodes.sh env)\" again after each nodes.sh up)", EnvClientNetNS, a.NetNS, err)
			}
			return nil, "", fmt.Errorf("network namespace %s: %w (is the cluster up? just k8s-up)", a.NetNS, err)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", a.Kubeconfig)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: %w", a.Kubeconfig, err)
	}
	cfg.Dial = a.NetNS.Dial
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "orchbench"
	c, err := kubernetes.NewForConfig(cfg)
	return c, cfg.Host, err
}
