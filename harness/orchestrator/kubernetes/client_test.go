package kubernetes

import (
	"os"
	"testing"

	"github.com/orchbench/orchbench/harness/netns"
)

// ORCHBENCH_K8S_NETNS names where the nodes' addresses are (the harness's
// own namespace, or the embedded node's); ORCHBENCH_K8S_CLIENT_NETNS a
// client machine's namespace the harness dials from instead, by path or by
// name, which endpoints then mark as the harness's only.
func TestAccessNamesTheNamespaceToDialIn(t *testing.T) {
	t.Setenv(EnvKubeconfig, "/tmp/admin.kubeconfig")
	for _, c := range []struct {
		netNS, client string
		want          netns.Path
		via           bool
	}{
		{"host", "", "", false},
		{"orchbench-k8s", "", netns.Named("orchbench-k8s"), false},
		{"host", "/proc/4242/ns/net", netns.OfProcess(4242), true},
		{"host", "k8s-client", netns.Named("k8s-client"), true},
	} {
		t.Setenv(EnvNetNS, c.netNS)
		t.Setenv(EnvClientNetNS, c.client)
		got := DefaultAccess()
		if got.NetNS != c.want || got.ViaClient != c.via || got.Kubeconfig != "/tmp/admin.kubeconfig" {
			t.Errorf("%s=%q %s=%q: %+v, want namespace %q, via a client %v", EnvNetNS, c.netNS, EnvClientNetNS, c.client, got, c.want, c.via)
		}
	}
	t.Setenv(EnvKubeconfig, "")
	t.Setenv(EnvClientNetNS, "")
	os.Unsetenv(EnvNetNS) // t.Setenv above puts it back
	if got := DefaultAccess(); got.NetNS != netns.Named(EmbeddedNetNS) || got.Kubeconfig != EmbeddedKubeconfig || got.ViaClient {
		t.Errorf("nothing named: %+v", got)
	}
}
