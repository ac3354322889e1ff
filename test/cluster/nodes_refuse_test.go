package cluster

import (
	"os"
	"strings"
	"testing"
)

// nodes.sh refuses a shape or budget it cannot make before it touches the
// docker daemon: each of these fails with a message naming the setting.
func TestNodesUpRefusesBadShapes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"nodes=4", "servers=2"}, "servers=2: a control plane of 1 or 3"},
		{[]string{"nodes=1", "servers=3"}, "nodes=1 with servers=3"},
		{[]string{"4", "0"}, "servers=0"},
		{[]string{"nodes=four"}, "nodes=four: a whole number"},
		{[]string{"nodes=61", "servers=3"}, "nodes=61: at most 60"},
		{[]string{"nodes=4", "node_cpus=0"}, "node_cpus=0: a number of cores above 0"},
		{[]string{"nodes=4", "node_cpus=999"}, "node_cpus=999"},
		{[]string{"nodes=4", "node_memory=lots"}, "node_memory=lots: a size"},
		{[]string{"nodes=4", "node_memory=128m"}, "node_memory=128m: at least 512m"},
		{[]string{"nodes=4", "zones=2"}, "unknown setting 'zones=2'"},
		{[]string{"nodes=4", "link_delay=fast"}, "link_delay=fast: a delay such as 0.1ms"},
		{[]string{"nodes=4", "link_delay=1s"}, "link_delay=1s: a delay such as 0.1ms"},
		{[]string{"4", "3", "2"}, "too many arguments"},
		{[]string{"nodes=4", "k8s=yes"}, "k8s=yes: 1 runs Kubernetes"},
		{[]string{"nodes=4", "k8s=1", "k8s_eviction=5m"}, "k8s_eviction=5m: a whole number of seconds"},
		{[]string{"nodes=4", "k8s=1", "k8s_grace=5"}, "k8s_grace=5: at least 10 seconds"},
	} {
		// a docker that cannot run: any call to it fails the case loudly
		r := runScript(t, []string{"PATH=" + noDockerPath(t)}, "nodes.sh", append([]string{"up"}, tc.args...)...)
		if r.err == nil || !strings.Contains(r.stdout, tc.says) {
			t.Errorf("up %v: want a refusal saying %q, got err=%v:\n%s%s", tc.args, tc.says, r.err, r.stdout, r.stderr)
		}
	}
}

// A subnet another docker network or a host route covers is refused,
// naming which; the docker daemon and the routes are stand-ins, so that
// the test needs no daemon and a refusal that no longer happens cannot
// start nodes from a unit test.
func TestNodesUpRefusesASubnetInUse(t *testing.T) {
	for _, tc := range []struct {
		name, network, route, says string
	}{
		{"a docker network", "10.77.0.0/16", "", "NODES_SUBNET=10.77.0.0/24 is in use: docker network 'bench-net' has 10.77.0.0/16"},
		{"a host route", "", "10.77.0.128/25 dev tun0 proto kernel scope link", "NODES_SUBNET=10.77.0.0/24 is in use: the host routes 10.77.0.128/25 through tun0"},
	} {
		dir := t.TempDir()
		writeFile(t, dir, "docker", `#!/bin/sh
for last; do :; done
case "$1 $2" in
  "info "*) exit 0 ;;
  "network ls") [ -n "`+tc.network+`" ] && echo bench-net; exit 0 ;;
  "network inspect") [ "$last" = bench-net ] && echo "`+tc.network+`" && exit 0; exit 1 ;;
esac
echo "docker $* refused by the test" >&2
exit 99
`, 0o755)
		writeFile(t, dir, "ip", `#!/bin/sh
echo "default via 192.0.2.1 dev eth0"
[ -n "`+tc.route+`" ] && echo "`+tc.route+`"
exit 0
`, 0o755)
		r := runScript(t, []string{"PATH=" + dir + ":" + os.Getenv("PATH"), "NODES_SUBNET=10.77.0.0/24"}, "nodes.sh", "up", "nodes=4", "servers=3")
		if r.err == nil || !strings.Contains(r.stdout, tc.says) {
			t.Errorf("%s: want a refusal saying %q, got err=%v:\n%s%s", tc.name, tc.says, r.err, r.stdout, r.stderr)
		}
	}
}

// noDockerPath is a PATH whose docker fails with a message, ahead of the
// test's own PATH.
func noDockerPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "docker", "#!/bin/sh\necho 'docker was called' >&2\nexit 99\n", 0o755)
	return dir + ":" + os.Getenv("PATH")
}
