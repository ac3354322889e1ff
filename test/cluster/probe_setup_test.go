//go:build multinode

package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testenv"
)

// probeHarness is a cluster of nodes with the probe deployed from this
// checkout, and the client node holding what a sweep reads: the static
// orchbench binary, packs/, jobs/ and the spec.
type probeHarness struct {
	workers []string
	runs    int
	// bin is this checkout's static orchbench
	bin string
}

// workDir is where the sweep runs inside the client node.
const workDir = "/opt/obn/work"

const probeSpec = "test/cluster/testdata/probe-sweep.hcl"

var probeImages = []string{taewaImage, "orchbench/orchbench:local", "orchbench/pause:local"}

func newProbeHarness(t *testing.T) *probeHarness {
	t.Helper()
	requireNodeHost(t, "just images", probeImages...)
	bin := buildStatic(t)
	env := []string{"ORCHBENCH_BIN=" + bin}
	if dockerOut(t, "ps", "-q", "--filter", "label=orchbench.nodes="+clusterName) == "" {
		began := time.Now()
		if r := runScript(t, env, "nodes.sh", "up", "nodes=3", "servers=1", "node_cpus=0.4", "node_memory=1g"); r.err != nil {
			runScript(t, nil, "nodes.sh", "down")
			t.Fatalf("nodes.sh up 3 1: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		t.Logf("figure: nodes.sh up 3 1 (4 nodes, probes included) in %.1f s", time.Since(began).Seconds())
		t.Cleanup(func() {
			if r := runScript(t, nil, "nodes.sh", "down"); r.err != nil {
				t.Errorf("nodes.sh down: %v\n%s", r.err, r.stdout)
			}
		})
	}
	h := &probeHarness{bin: bin}
	for _, line := range strings.Fields(dockerOut(t, "ps", "--filter", "label=orchbench.nodes="+clusterName,
		"--filter", "label=orchbench.node.role=worker", "--format", "{{.Names}}")) {
		h.workers = append(h.workers, line)
	}
	slices.Sort(h.workers)
	if len(h.workers) == 0 {
		t.Fatalf("cluster %s has no worker node", clusterName)
	}
	h.loadImages(t)
	h.bridgePlugins(t)
	// this checkout's probe on every node, whatever the cluster ran before
	if r := runScript(t, env, "nodes.sh", "probes"); r.err != nil {
		t.Fatalf("nodes.sh probes: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	// the app must land on a worker, out of the client node's sight
	h.nomad(t, client, "node", "eligibility", "-disable", "-self")
	t.Cleanup(func() { h.nomad(t, client, "node", "eligibility", "-enable", "-self") })
	h.stageWorkDir(t, bin)
	return h
}

// buildStatic builds this checkout's orchbench without cgo, runnable in
// any node.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "orchbench")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./harness/cmd/orchbench")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build orchbench: %v\n%s", err, out)
	}
	return bin
}

// loadImages loads what the sweep runs into every node that lacks it.
func (h *probeHarness) loadImages(t *testing.T) {
	t.Helper()
	var missing []string
	for _, img := range probeImages {
		for _, n := range append(append([]string{}, h.workers...), client) {
			if _, err := dockerTry("exec", n, "docker", "image", "inspect", img); err != nil {
				missing = append(missing, img)
				break
			}
		}
	}
	if len(missing) == 0 {
		return
	}
	if r := runScript(t, nil, "nodes.sh", append([]string{"load-images"}, missing...)...); r.err != nil {
		t.Fatalf("load-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
}

// bridgePlugins gives the Nomad clients the CNI plugins of bridge-mode
// groups (Taewa's pack uses one) when the node image lacks them: the
// host's, in Nomad's default cni_path, and a client restart to fingerprint
// them. The probe job is stopped around the restart, so that no probe of
// the old client holds its port.
func (h *probeHarness) bridgePlugins(t *testing.T) {
	t.Helper()
	nodes := append(append([]string{}, h.workers...), client)
	if _, err := dockerTry("exec", client, "sh", "-c", "test -x /opt/cni/bin/bridge || test -x /usr/lib/cni/bridge"); err == nil {
		return
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		testenv.Missing(t, "the nodes have no CNI bridge plugin and neither has this machine (/usr/lib/cni)")
	}
	h.nomad(t, servers[0], "job", "stop", "-purge", "node-probe")
	for _, n := range nodes {
		dockerOut(t, "exec", n, "mkdir", "-p", "/opt/cni/bin")
		tar := exec.Command("sh", "-c", fmt.Sprintf("tar -C /usr/lib/cni -c . | docker exec -i %s tar -x -C /opt/cni/bin", n))
		if out, err := tar.CombinedOutput(); err != nil {
			t.Fatalf("copy the CNI plugins into %s: %v\n%s", n, err, out)
		}
		pid := strings.TrimSpace(dockerOut(t, "exec", n, "pgrep", "-x", "nomad"))
		dockerOut(t, "exec", n, "kill", pid)
	}
	time.Sleep(3 * time.Second)
	for _, n := range nodes {
		dockerOut(t, "exec", "-d", n, "sh", "-c", "exec /opt/obn/bin/nomad agent -config /etc/obn/nomad.hcl >>/var/log/obn/nomad.log 2>&1")
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, _ := dockerTry("exec", servers[0], "/opt/obn/bin/nomad", "node", "status", "-address", "http://"+nodeAddr(servers[0])+":4646", "-verbose")
		if strings.Count(out, " ready") >= len(nodes) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Nomad clients not ready after their restart:\n%s", out)
		}
		time.Sleep(2 * time.Second)
	}
}

// probeImage is an orchbench image of this checkout's binary (FROM
// scratch, as cluster/images.sh makes it), under a tag of the test's own,
// loaded into the nodes.
func (h *probeHarness) probeImage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY orchbench /orchbench\nENTRYPOINT [\"/orchbench\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, h.bin, filepath.Join(dir, "orchbench"))
	image := "orchbench/orchbench:" + clusterName + "-probe-test"
	dockerOut(t, "build", "-q", "-t", image, dir)
	t.Cleanup(func() { dockerTry("rmi", image) })
	if r := runScript(t, nil, "nodes.sh", "load-images", image); r.err != nil {
		t.Fatalf("load-images %s: %v\n%s%s", image, r.err, r.stdout, r.stderr)
	}
	return image
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// nomad runs a nomad command in node, against that node's agent.
func (h *probeHarness) nomad(t *testing.T, node string, args ...string) string {
	t.Helper()
	cmd := append([]string{"exec", "-e", "NOMAD_ADDR=http://" + nodeAddr(node) + ":4646", node, "/opt/obn/bin/nomad"}, args...)
	return dockerOut(t, cmd...)
}

// stageWorkDir puts the binary, packs/, jobs/ and the spec in the client node.
func (h *probeHarness) stageWorkDir(t *testing.T, bin string) {
	t.Helper()
	dockerOut(t, "exec", client, "sh", "-c", "rm -rf "+workDir+" && mkdir -p "+workDir)
	dockerOut(t, "cp", bin, client+":"+workDir+"/orchbench")
	tar := exec.Command("sh", "-c", fmt.Sprintf("tar -c packs jobs %s | docker exec -i %s tar -x -C %s", probeSpec, client, workDir))
	tar.Dir = repoRoot(t)
	if out, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("stage the work directory in %s: %v\n%s", client, err, out)
	}
}

// blockProbe makes node's probe refuse every connection until the test ends.
func (h *probeHarness) blockProbe(t *testing.T, node string) {
	t.Helper()
	rule := []string{"INPUT", "-p", "tcp", "--dport", "7070", "-j", "REJECT", "--reject-with", "tcp-reset"}
	dockerOut(t, append([]string{"exec", node, "iptables", "-I"}, rule...)...)
	t.Cleanup(func() { dockerOut(t, append([]string{"exec", node, "iptables", "-D"}, rule...)...) })
}

func (h *probeHarness) isWorker(node string) bool { return slices.Contains(h.workers, node) }

// sweepRun is one sweep of the spec run in the client node.
type sweepRun struct {
	output  string
	seconds float64
	step    stepSummary
}

type stepSummary struct {
	Outcome  string                     `json:"outcome"`
	Reasons  []string                   `json:"reasons"`
	Gates    []gateSummary              `json:"gates"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

type gateSummary struct {
	Name       string `json:"name"`
	Passed     bool   `json:"passed"`
	NotChecked bool   `json:"not_checked"`
	Detail     string `json:"detail"`
}

type taskLimits struct {
	Node           string  `json:"node"`
	EffectiveCores float64 `json:"effective_cores"`
	ImageID        string  `json:"image_id"`
	CgroupPath     string  `json:"cgroup_path"`
}

var sweepIDRE = regexp.MustCompile(`(?m)^sweep (\S+): 1 steps`)

// sweep runs the spec from the client node, as an operator there would:
// Nomad and Consul at the first server, nothing pushed anywhere.
func (h *probeHarness) sweep(t *testing.T, flags ...string) sweepRun {
	t.Helper()
	h.runs++
	srv := nodeAddr(servers[0])
	args := []string{"exec", "-w", workDir, "-e", "NOMAD_ADDR=http://" + srv + ":4646", "-e", "CONSUL_HTTP_ADDR=http://" + srv + ":8500",
		client, "timeout", "600", "./orchbench", "sweep", "-f", probeSpec, "--vm", "", "--dir", fmt.Sprintf("results-%d", h.runs), "--reports", "reports"}
	began := time.Now()
	out, err := exec.Command("docker", append(args, flags...)...).CombinedOutput()
	r := sweepRun{output: string(out), seconds: time.Since(began).Seconds()}
	m := sweepIDRE.FindStringSubmatch(r.output)
	if m == nil {
		t.Fatalf("the sweep in %s did not start (%v):\n%s", client, err, out)
	}
	raw := dockerOut(t, "exec", client, "sh", "-c", fmt.Sprintf("cat %s/results-%d/%s/*/summary.json", workDir, h.runs, m[1]))
	if err := json.Unmarshal([]byte(raw), &r.step); err != nil {
		t.Fatalf("summary of sweep %s: %v\n%s", m[1], err, raw)
	}
	t.Logf("sweep %s: %s %v in %.1f s", m[1], r.step.Outcome, r.step.Reasons, r.seconds)
	return r
}

func (r sweepRun) gate(name string) (gateSummary, bool) {
	for _, g := range r.step.Gates {
		if g.Name == name {
			return g, true
		}
	}
	return gateSummary{}, false
}

func (r sweepRun) limits(t *testing.T) []taskLimits {
	t.Helper()
	var out []taskLimits
	if err := json.Unmarshal(r.step.Metadata["limits"], &out); err != nil {
		t.Fatalf("the step's limits: %v", err)
	}
	return out
}

// reasonSays: one reason holds every part.
func (r sweepRun) reasonSays(parts ...string) bool {
	for _, reason := range r.step.Reasons {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(reason, p)
		}
		if all {
			return true
		}
	}
	return false
}
