//go:build multinode

package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/placement"
)

// Images, placement, the load job's node and the link on the emulated
// cluster (issue 24, items 1 and 4): the registry on the client node
// serves images the workers pull; Taewa spread over 3 workers lands on 3,
// packed on 1; the load job runs on the client node; the nodes' link delay
// is in the facts. Each check is also shown failing on a wrong setup. It
// uses the cluster of NODES_NAME when one is up (and leaves it up), else
// brings up nodes=4 servers=1 and takes it down at the end:
//
//	NODES_NAME=pl NODES_SUBNET=10.80.0.0/24 go test -tags multinode -count=1 -timeout 20m -v -run TestNodesPlacement ./test/cluster/
func TestNodesPlacement(t *testing.T) {
	requireNodeHost(t, "just images taewa orchbench", taewaImage, orchestrator.DefaultLoadImage)
	ownCluster := dockerOut(t, "ps", "-q", "--filter", "label=orchbench.nodes="+clusterName) == ""
	if ownCluster {
		up := runScript(t, nil, "nodes.sh", "up", "nodes=4", "servers=1")
		t.Cleanup(func() { runScript(t, nil, "nodes.sh", "down") })
		if up.err != nil {
			t.Fatalf("nodes.sh up 4 1: %v\n%s%s", up.err, up.stdout, up.stderr)
		}
	}
	leader := firstServer(t)
	addr := "http://" + nodeAddr(leader)
	o, err := nomad.New(addr+":4646", addr+":8500")
	if err != nil {
		t.Fatal(err)
	}
	registry := imageref.Registry(nodeAddr(client) + ":5000")

	pushAndPull(t, registry)
	t.Run("registry down", func(t *testing.T) { deployFailsWithDeadRegistry(t, o) })
	t.Run("spread and packed", func(t *testing.T) { spreadAndPacked(t, o, registry) })
	t.Run("load on the client node", func(t *testing.T) { loadOnClient(t, o, registry) })
	t.Run("swarm placement", func(t *testing.T) { swarmPlacement(t, o, registry) })
	t.Run("absent keys pass", func(t *testing.T) { absentKeysPass(t, o, registry) })
	t.Run("budgets", func(t *testing.T) { budgets(t, o) })
	t.Run("link delay", func(t *testing.T) { linkDelay(t, o) })
}

// firstServer is the first running server node (servers=1 or 3).
func firstServer(t *testing.T) string {
	names := strings.Fields(dockerOut(t, "ps", "--filter", "label=orchbench.nodes="+clusterName, "--filter", "label=orchbench.node.role=server", "--format", "{{.Names}}"))
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("no server node is running")
	}
	return names[0]
}

// pushAndPull: nodes.sh push-images puts the images in the registry and a
// worker pulls one from it; the figures are the push and the pull time.
func pushAndPull(t *testing.T, registry imageref.Registry) {
	began := time.Now()
	if r := runScript(t, nil, "nodes.sh", "push-images", taewaImage, orchestrator.DefaultLoadImage); r.err != nil {
		t.Fatalf("push-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	t.Logf("figure: push-images %s %s in %.1f s", taewaImage, orchestrator.DefaultLoadImage, time.Since(began).Seconds())
	worker := clusterName + "-worker3"
	ref := registry.Ref(taewaImage)
	// a worker that has it already would pull nothing
	_, _ = dockerTry("exec", worker, "docker", "rmi", "-f", ref)
	began = time.Now()
	if out, err := dockerTry("exec", worker, "docker", "pull", "-q", ref); err != nil {
		t.Fatalf("%s: docker pull %s: %v\n%s", worker, ref, err, out)
	}
	t.Logf("figure: %s pulled %s in %.1f s", worker, ref, time.Since(began).Seconds())
}

// render renders Taewa as the harness does for a step: placement taken out
// of the variables and applied to the parsed jobs, images at the registry.
func render(t *testing.T, o *nomad.Orchestrator, registry imageref.Registry, vars map[string]string) []*nomadapi.Job {
	t.Helper()
	p, err := pack.Load(filepath.Join(repoRoot(t), "packs", "taewa"))
	if err != nil {
		t.Fatal(err)
	}
	mode, vars, err := placement.Take(vars)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.RenderSized(vars, nil, func() (float64, error) {
		c, err := o.Capacity(context.Background())
		return c.MHzPerCore, err
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := o.ParseJobs(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := placement.Apply(jobs, mode); err != nil {
		t.Fatal(err)
	}
	registry.Rewrite(jobs)
	return jobs
}

// deploy deploys the one job and waits; the job is stopped at the end.
func deploy(t *testing.T, o *nomad.Orchestrator, job *nomadapi.Job, timeout time.Duration) (*orchestrator.Deployment, error) {
	t.Helper()
	w, err := orchestrator.NewWorkload(job)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	d, err := o.Deploy(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Stop(context.Background(), d) })
	return d, o.WaitHealthy(ctx, d, timeout)
}

// deployFailsWithDeadRegistry: a registry nothing answers at makes the
// deployment fail, naming the image and the registry.
func deployFailsWithDeadRegistry(t *testing.T, o *nomad.Orchestrator) {
	dead := imageref.Registry(nodeAddr(client) + ":5999")
	jobs := render(t, o, dead, map[string]string{"resource_scale": "0.03", "job_name": "taewa-deadregistry"})
	_, err := deploy(t, o, jobs[0], 2*time.Minute)
	if err == nil {
		t.Fatal("a job whose registry is down became healthy")
	}
	if !strings.Contains(err.Error(), string(dead)+"/"+taewaImage) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("the error names neither the image nor the registry's answer: %v", err)
	}
	t.Logf("wrong setup (registry down): %v", err)
}

// nodesOf lists the node of every instance the adapter reports.
func nodesOf(t *testing.T, o *nomad.Orchestrator, d *orchestrator.Deployment) []string {
	ins, err := o.Instances(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range ins {
		if in.Node == "" {
			t.Errorf("instance %s has no node", in.Label())
		}
		out = append(out, in.Node)
	}
	sort.Strings(out)
	return out
}

func distinct(nodes []string) int {
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n] = true
	}
	return len(seen)
}

// spreadAndPacked: 3 instances spread over 3 workers, packed on 1 (the
// front end's); spread with more instances than workers cannot be placed.
func spreadAndPacked(t *testing.T, o *nomad.Orchestrator, registry imageref.Registry) {
	for _, c := range []struct {
		mode  placement.Mode
		nodes int
	}{{placement.Spread, 3}, {placement.Packed, 1}} {
		jobs := render(t, o, registry, map[string]string{"resource_scale": "0.03", "scale": "3", "job_name": "taewa-" + string(c.mode), placement.Variable: string(c.mode)})
		d, err := deploy(t, o, jobs[0], 4*time.Minute)
		if err != nil {
			t.Fatalf("placement %s: %v", c.mode, err)
		}
		nodes := nodesOf(t, o, d)
		t.Logf("placement %s: instances on %v", c.mode, nodes)
		if distinct(nodes) != c.nodes || len(nodes) != 3 {
			t.Errorf("placement %s: 3 instances on %d nodes (%v), want %d", c.mode, distinct(nodes), nodes, c.nodes)
		}
		for _, n := range nodes {
			if !strings.Contains(n, "-worker") {
				t.Errorf("placement %s: an instance on %s, which is not a worker", c.mode, n)
			}
			if c.mode == placement.Packed && n != clusterName+"-worker1" {
				t.Errorf("packed: an instance on %s, not on the front end's worker1", n)
			}
		}
		_ = o.Stop(context.Background(), d)
	}
	jobs := render(t, o, registry, map[string]string{"resource_scale": "0.03", "scale": "4", "job_name": "taewa-spread4", placement.Variable: "spread"})
	_, err := deploy(t, o, jobs[0], time.Minute)
	if err == nil || !strings.Contains(err.Error(), "distinct_hosts") {
		t.Fatalf("4 instances spread over 3 workers: want a placement failure naming distinct_hosts, got %v", err)
	}
	t.Logf("wrong setup (spread, 4 instances, 3 workers): %v", err)
}

// loadOnClient: the load generator's job runs on the client node; with the
// client node ineligible it cannot be placed at all (never on a worker).
func loadOnClient(t *testing.T, o *nomad.Orchestrator, registry imageref.Registry) {
	jobs := render(t, o, registry, map[string]string{"resource_scale": "0.03", "job_name": "taewa-loaded"})
	d, err := deploy(t, o, jobs[0], 4*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := o.Endpoints(context.Background(), d, d.App.Service)
	if err != nil || len(eps) == 0 {
		t.Fatalf("endpoints of %s: %v", d.App.Service, err)
	}
	runner := &nomad.LoadRunner{Client: o.Client, JobFile: filepath.Join(repoRoot(t), "jobs", "loadgen.nomad.hcl"),
		Image: registry.Ref(orchestrator.DefaultLoadImage), JobID: "pl-test-loadgen"}
	t.Cleanup(func() { _, _, _ = o.Client.Jobs().Deregister(runner.JobID, true, nil) })
	run := func(bound time.Duration) (string, error) {
		started := make(chan struct{})
		where := make(chan string, 1)
		go func() {
			select {
			case <-started:
				where <- dispatchedNode(o.Client, runner.JobID)
			case <-time.After(bound):
				where <- ""
			}
		}()
		req := orchestrator.LoadRequest{StepID: "placement-test", URL: "http://" + eps[0].HostPort() + d.App.LoadPath,
			Args: []string{"-t1", "-c2", "-d2s", "-R20", "--allow-host", eps[0].Address}, Bound: bound, Started: started}
		_, _, err := runner.Run(context.Background(), req)
		return <-where, err
	}
	node, err := run(3 * time.Minute)
	if err != nil {
		t.Fatalf("load job: %v", err)
	}
	t.Logf("load job ran on %s", node)
	if node != client {
		t.Errorf("the load job ran on %q, want the client node %s", node, client)
	}
	clientID := nodeID(t, o.Client, client)
	if _, err := o.Client.Nodes().ToggleEligibility(clientID, false, nil); err != nil {
		t.Fatal(err)
	}
	defer o.Client.Nodes().ToggleEligibility(clientID, true, nil)
	node, err = run(30 * time.Second)
	if err == nil || node != "" {
		t.Fatalf("with the client node ineligible the load job still ran (on %q): %v", node, err)
	}
	t.Logf("wrong setup (client node ineligible): the load job was not placed on a worker: %v", err)
}

// dispatchedNode is the node of the running allocation of a job dispatched
// from the parameterized job id.
func dispatchedNode(c *nomadapi.Client, id string) string {
	jobs, _, err := c.Jobs().PrefixList(id + "/dispatch")
	if err != nil {
		return ""
	}
	for _, j := range jobs {
		allocs, _, err := c.Jobs().Allocations(j.ID, false, nil)
		if err != nil {
			continue
		}
		for _, a := range allocs {
			if a.ClientStatus == "running" || a.ClientStatus == "complete" {
				return a.NodeName
			}
		}
	}
	return ""
}

func nodeID(t *testing.T, c *nomadapi.Client, name string) string {
	nodes, _, err := c.Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("no Nomad node %s", name)
	return ""
}

// rttRE reads ping's summary line.
var rttRE = regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) ms`)

// pingRTT is the mean round trip from one node to another over 20 pings.
func pingRTT(t *testing.T, from, to string) float64 {
	out := dockerOut(t, "exec", from, "ping", "-c", "20", "-i", "0.2", "-q", nodeAddr(to))
	m := rttRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("ping %s -> %s: no summary in %q", from, to, out)
	}
	avg, _ := strconv.ParseFloat(m[2], 64)
	return avg
}

// linkDelay: the delay nodes.sh set (or "0") is every node's fact, and
// the ping RTT between two workers carries it twice; where the kernel has
// no netem, up refuses a delay before it starts anything.
func linkDelay(t *testing.T, o *nomad.Orchestrator) {
	facts, err := o.Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	delay := ""
	for node, f := range facts {
		v, ok := f[orchestrator.FactLinkDelay]
		if !ok {
			t.Errorf("node %s: no %s fact", node, orchestrator.FactLinkDelay)
		}
		if delay != "" && v != delay {
			t.Errorf("node %s: %s %q, another node %q", node, orchestrator.FactLinkDelay, v, delay)
		}
		delay = v
	}
	rtt := pingRTT(t, clusterName+"-worker1", clusterName+"-worker2")
	t.Logf("figure: link_delay %s: ping worker1 -> worker2 mean RTT %.3f ms (20 pings)", delay, rtt)
	if d, err := time.ParseDuration(strings.Replace(delay, "us", "µs", 1)); err == nil && d > 0 {
		if want := 2 * d.Seconds() * 1000; rtt < want {
			t.Errorf("RTT %.3f ms with link_delay %s: under the %.3f ms the delay alone adds", rtt, delay, want)
		}
	}
	// the refusal, on a name whose nodes do not exist: nothing is made
	env := []string{"NODES_NAME=" + clusterName + "x", "NODES_SUBNET=" + os.Getenv("NODES_SUBNET")}
	r := runScript(t, env, "nodes.sh", "up", "nodes=2", "servers=1", "link_delay=0.1ms")
	netem := exec.Command("docker", "run", "--rm", "--cap-add", "NET_ADMIN", "orchbench/node:local", "tc", "qdisc", "add", "dev", "eth0", "root", "netem", "delay", "1ms").Run() == nil
	if !netem {
		if r.err == nil || !strings.Contains(r.stdout+r.stderr, "no netem qdisc") {
			t.Errorf("link_delay on a kernel without netem: want a refusal naming netem, got %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		t.Logf("wrong setup (link_delay, no netem in this kernel): %s", lastLine(r.stdout+r.stderr))
	} else {
		runScript(t, env, "nodes.sh", "down")
		t.Logf("this kernel has netem: run the test on a cluster brought up with link_delay=0.1ms to see it in the RTT")
	}
	if left := dockerOut(t, "ps", "-aq", "--filter", "label=orchbench.nodes="+clusterName+"x"); !netem && left != "" {
		t.Errorf("a refused up left containers: %s", left)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
