//go:build multinode

package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// gatesHarness is a cluster of nodes ready for the validity sweep run from
// its client node: this checkout's probe on every Nomad client, the images
// every row runs loaded into the workers and the client, and the client
// node's work directory holding the static orchbench, packs/ and jobs/.
type gatesHarness struct {
	workers []string
	// forwarder is the proxied row's forwarder, built static for a node
	forwarder string
	// faultyImage is Taewa's image with the faulty server in its place
	faultyImage string
	// nomadAPI is Nomad at the server, from this machine
	nomadAPI *nomadapi.Client
}

// gatesWorkDir is where the validity sweeps run inside the client node.
const gatesWorkDir = "/opt/obn/gates"

var gatesImages = []string{taewaImage, "orchbench/orchbench:local", "orchbench/pause:local", "orchbench/fortio:local", "orchbench/jmeter:local", "orchbench/artillery:local"}

func newGatesHarness(t *testing.T) *gatesHarness {
	t.Helper()
	requireNodeHost(t, "just images taewa orchbench pause fortio jmeter artillery", gatesImages...)
	bin := buildStatic(t)
	h := &gatesHarness{forwarder: buildStaticPackage(t, "./test/wrongsetup/forwarder")}
	if dockerOut(t, "ps", "-q", "--filter", "label=orchbench.nodes="+clusterName) == "" {
		began := time.Now()
		// Nodes as large as the machine: the rows' unlimited variant
		// declares no CPU cap and a memory ceiling of 2048 MiB (quota's),
		// and the limits gate rightly calls a task inside a smaller node
		// budget capped (0.5 cores and 1536 MiB made every such row
		// invalid by it). A budget is a ceiling, not a reservation: the
		// rows' loads are what the nodes use.
		cpus := fmt.Sprintf("node_cpus=%d", runtime.NumCPU())
		if r := runScript(t, []string{"ORCHBENCH_BIN=" + bin}, "nodes.sh", "up", "nodes=3", "servers=1", cpus, "node_memory=2560m"); r.err != nil {
			runScript(t, nil, "nodes.sh", "down")
			t.Fatalf("nodes.sh up 3 1: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		t.Logf("figure: nodes.sh up 3 1 in %.1f s", time.Since(began).Seconds())
		t.Cleanup(func() {
			if r := runScript(t, nil, "nodes.sh", "down"); r.err != nil {
				t.Errorf("nodes.sh down: %v\n%s", r.err, r.stdout)
			}
		})
	} else if r := runScript(t, []string{"ORCHBENCH_BIN=" + bin}, "nodes.sh", "probes"); r.err != nil {
		// this checkout's probe on every node, whatever the cluster ran before
		t.Fatalf("nodes.sh probes: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	h.workers = strings.Fields(dockerOut(t, "ps", "--filter", "label=orchbench.nodes="+clusterName,
		"--filter", "label=orchbench.node.role=worker", "--format", "{{.Names}}"))
	slices.Sort(h.workers)
	if len(h.workers) == 0 {
		t.Fatalf("cluster %s has no worker node", clusterName)
	}
	var err error
	if h.nomadAPI, err = nomadapi.NewClient(&nomadapi.Config{Address: "http://" + nodeAddr(server1) + ":4646"}); err != nil {
		t.Fatal(err)
	}
	h.faultyImage = buildFaultyImage(t)
	began := time.Now()
	if r := runScript(t, nil, "nodes.sh", append([]string{"load-images", h.faultyImage}, gatesImages...)...); r.err != nil {
		t.Fatalf("load-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	t.Logf("figure: load-images of %d images in %.1f s", len(gatesImages)+1, time.Since(began).Seconds())

	dockerOut(t, "exec", client, "sh", "-c", "rm -rf "+gatesWorkDir+" && mkdir -p "+gatesWorkDir)
	dockerOut(t, "cp", bin, client+":"+gatesWorkDir+"/orchbench")
	tar := exec.Command("sh", "-c", fmt.Sprintf("tar -c packs jobs | docker exec -i %s tar -x -C %s", client, gatesWorkDir))
	tar.Dir = repoRoot(t)
	if out, err := tar.CombinedOutput(); err != nil {
		t.Fatalf("stage the work directory in %s: %v\n%s", client, err, out)
	}
	return h
}

// buildStaticPackage builds a command of this module without cgo, runnable
// in any node.
func buildStaticPackage(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// buildFaultyImage is Taewa's image with test/integration's faulty server
// in place of Taewa's, under a tag of this cluster's, removed after.
func buildFaultyImage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, filepath.Join(repoRoot(t), "test", "integration", "testdata", "faulty-server.js"), filepath.Join(dir, "server.js"))
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM "+taewaImage+"\nCOPY server.js /opt/taewa/server.js\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := "orchbench/taewa:" + clusterName + "-faulty"
	dockerOut(t, "build", "-q", "-t", image, dir)
	t.Cleanup(func() { dockerTry("rmi", image) })
	return image
}

func (h *gatesHarness) isWorker(node string) bool { return slices.Contains(h.workers, node) }

// remarshal decodes v (a step's metadata, read back as generic JSON) into out.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
