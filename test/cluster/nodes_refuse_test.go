package cluster

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/testenv"
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
		{[]string{"4", "3", "2"}, "too many arguments"},
	} {
		// a docker that cannot run: any call to it fails the case loudly
		r := runScript(t, []string{"PATH=" + noDockerPath(t)}, "nodes.sh", append([]string{"up"}, tc.args...)...)
		if r.err == nil || !strings.Contains(r.stdout, tc.says) {
			t.Errorf("up %v: want a refusal saying %q, got err=%v:\n%s%s", tc.args, tc.says, r.err, r.stdout, r.stderr)
		}
	}
}

// A subnet another docker network holds is refused, naming that network.
func TestNodesUpRefusesASubnetInUse(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		testenv.Missing(t, "no docker daemon answers: %v", err)
	}
	out, err := exec.Command("docker", "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", "bridge").Output()
	if err != nil {
		testenv.Missing(t, "no docker network 'bridge': %v", err)
	}
	var taken string
	for _, cidr := range strings.Fields(string(out)) {
		if !strings.Contains(cidr, ":") {
			taken = cidr
		}
	}
	if taken == "" {
		testenv.Missing(t, "docker's bridge network has no IPv4 subnet")
	}
	// the /24 at the start of the bridge's subnet
	parts := strings.Split(strings.Split(taken, "/")[0], ".")
	subnet := strings.Join(parts[:3], ".") + ".0/24"
	r := runScript(t, []string{"NODES_SUBNET=" + subnet, "PATH=" + readOnlyDockerPath(t)}, "nodes.sh", "up", "nodes=4", "servers=3")
	if r.err == nil || !strings.Contains(r.stdout, "NODES_SUBNET="+subnet+" is in use: docker network 'bridge'") {
		t.Errorf("NODES_SUBNET=%s (inside bridge's %s): want a refusal naming the bridge network, got err=%v:\n%s%s", subnet, taken, r.err, r.stdout, r.stderr)
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

// readOnlyDockerPath is a PATH whose docker passes the commands that only
// read (info, network ls/inspect) to the real one and refuses the rest, so
// that a refusal that no longer happens cannot start nodes from a unit test.
func readOnlyDockerPath(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("docker")
	if err != nil {
		testenv.Missing(t, "no docker on PATH")
	}
	dir := t.TempDir()
	writeFile(t, dir, "docker", `#!/bin/sh
case "$1 $2" in
  "info "*|"network ls"|"network inspect") exec `+real+` "$@" ;;
esac
echo "docker $* refused by the test" >&2
exit 99
`, 0o755)
	return dir + ":" + os.Getenv("PATH")
}
