//go:build multinode

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	mobyswarm "github.com/moby/moby/api/types/swarm"
	mobyclient "github.com/moby/moby/client"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/orchestrator/swarm"
	"github.com/orchbench/orchbench/harness/placement"
)

// engineAddr is where nodes.sh makes NODE's dockerd listen besides its socket.
func engineAddr(node string) string { return "tcp://" + nodeAddr(node) + ":2375" }

// TestNodesSwarmAdapter: the harness's Swarm adapter, run on the host with
// DOCKER_HOST at a manager's engine, deploys Taewa spread on the workers
// through the registry, reads every task's container from its worker's
// engine (the manager is drained and knows none of them), runs a bounded
// load job on the client node and reads its result and output there,
// collects the tasks' events from every node, and stops the job on every
// node. Each node's facts come from its own engine and labels. A worker
// whose engine refuses the harness is an error naming the
// node and its address.
//
// WaitHealthy is not called: the health check enters the container's
// network namespace by its PID, and a node's PIDs are not this machine's;
// the checks through each node's probe are h-probe's branch (747dd5c).
func TestNodesSwarmAdapter(t *testing.T) {
	requireNodeHost(t, "just images taewa orchbench", taewaImage, orchestrator.DefaultLoadImage)
	if dockerOut(t, "ps", "-q", "--filter", "label=orchbench.nodes="+clusterName) == "" {
		up := runScript(t, nil, "nodes.sh", "up", "nodes=3", "servers=1")
		t.Cleanup(func() { runScript(t, nil, "nodes.sh", "down") })
		if up.err != nil {
			t.Fatalf("nodes.sh up 3 1: %v\n%s%s", up.err, up.stdout, up.stderr)
		}
	}
	manager := firstServer(t)
	registry := imageref.Registry(nodeAddr(client) + ":5000")
	if r := runScript(t, nil, "nodes.sh", "push-images", taewaImage, orchestrator.DefaultLoadImage); r.err != nil {
		t.Fatalf("push-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	env := runScript(t, nil, "nodes.sh", "env")
	if env.err != nil || !strings.Contains(env.stdout, "export DOCKER_HOST="+engineAddr(manager)) {
		t.Fatalf("nodes.sh env does not export DOCKER_HOST=%s: %v\n%s%s", engineAddr(manager), env.err, env.stdout, env.stderr)
	}
	nomadAddr := "http://" + nodeAddr(manager)
	no, err := nomad.New(nomadAddr+":4646", nomadAddr+":8500")
	if err != nil {
		t.Fatal(err)
	}
	o, err := swarm.New(engineAddr(manager))
	if err != nil {
		t.Fatal(err)
	}
	o.Load.Image = registry.Ref(orchestrator.DefaultLoadImage)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	jobs := render(t, no, registry, map[string]string{"resource_scale": "0.03", "scale": "2", "job_name": "sw-taewa", placement.Variable: string(placement.Spread)})
	w, err := orchestrator.NewWorkload(jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	d, err := o.Deploy(ctx, w)
	if err != nil {
		t.Fatalf("deploy through %s: %v", engineAddr(manager), err)
	}
	t.Cleanup(func() { _ = o.Stop(context.Background(), d) })
	ins := waitInstances(t, ctx, o, d, 2)
	t.Logf("figure: 2 tasks of Taewa running %.1f s after Deploy through %s", time.Since(began).Seconds(), engineAddr(manager))

	var nodes []string
	for _, in := range ins {
		nodes = append(nodes, in.Node)
		if !strings.HasPrefix(in.Node, clusterName+"-worker") || in.ImageID == "" {
			t.Errorf("instance %s on %q with image ID %q: want a worker and the image its engine ran", in.ID, in.Node, in.ImageID)
		}
		// the PID the adapter reads is the one the task's own node reports
		pid, err := o.Engine.ContainerPID(ctx, in.ID)
		if err != nil {
			t.Fatalf("ContainerPID of task %s on %s: %v", in.ID, in.Node, err)
		}
		cid := dockerOut(t, "exec", manager, "docker", "inspect", "-f", "{{.Status.ContainerStatus.ContainerID}}", in.ID)
		want := dockerOut(t, "exec", in.Node, "docker", "inspect", "-f", "{{.State.Pid}}", cid)
		if fmt.Sprint(pid) != want {
			t.Errorf("task %s: the adapter read PID %d, %s's engine says %s", in.ID, pid, in.Node, want)
		}
	}
	sort.Strings(nodes)
	t.Logf("instances recorded on %v", nodes)
	if len(nodes) != 2 || nodes[0] == nodes[1] {
		t.Errorf("placement spread: instances on %v, want 2 distinct workers", nodes)
	}

	t.Run("facts of every node", func(t *testing.T) {
		facts, err := o.Facts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			f := facts[n]
			kernel := dockerOut(t, "exec", n, "uname", "-r")
			if f == nil || f["kernel.version"] != kernel || f["cgroup.driver"] == "" || f[orchestrator.FactLinkDelay] != "0" {
				t.Errorf("facts of %s: %v; want its engine's kernel %s and cgroup driver, and link delay 0 from its label", n, f, kernel)
			}
		}
	})
	t.Run("load on the client node", func(t *testing.T) { swarmLoadOnClient(t, ctx, o, d) })
	t.Run("events from every node", func(t *testing.T) {
		evs, err := o.TaskEvents(ctx, d, began)
		if err != nil {
			t.Fatal(err)
		}
		started := map[string]bool{}
		for _, e := range evs {
			if e.Kind == orchestrator.EventStarted {
				started[e.Instance] = true
			}
		}
		for _, in := range ins {
			if !started[in.ID] {
				t.Errorf("no start event of task %s (on %s) among %d events", in.ID, in.Node, len(evs))
			}
		}
	})
	t.Run("worker engine unreachable", func(t *testing.T) { unreachableEngine(t, ctx, manager, d, ins) })
	var exports []string
	for _, line := range strings.Split(env.stdout, "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			exports = append(exports, kv)
		}
	}
	t.Run("from the client node", func(t *testing.T) { swarmFromClient(t, ctx, exports) })
	if err := o.Stop(ctx, d); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, n := range nodes {
		if left := dockerOut(t, "exec", n, "docker", "ps", "-aq", "--filter", "label="+swarm.LabelJob+"="+d.Job); left != "" {
			t.Errorf("after Stop, %s still has containers of %s: %s", n, d.Job, left)
		}
	}
}

// waitInstances waits (3 minutes at most) until the deployment runs want
// instances, read through their nodes' engines.
func waitInstances(t *testing.T, ctx context.Context, o *swarm.Orchestrator, d *orchestrator.Deployment, want int) []orchestrator.Instance {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ins, err := o.Instances(ctx, d)
		if err == nil && len(ins) == want {
			return ins
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 minutes %d of %d instances run: %v", len(ins), want, err)
		}
		time.Sleep(2 * time.Second)
	}
}

// swarmLoadOnClient runs a bounded load job (2 s at 20 requests/s) at one
// task's published port on its worker; the job can run only on the client
// node, so its result and output come from the client's engine.
func swarmLoadOnClient(t *testing.T, ctx context.Context, o *swarm.Orchestrator, d *orchestrator.Deployment) {
	addr := publishedEntry(t, ctx, o.Engine.Client, d)
	// the step's health gate stands in here: the entry answers from the client node
	url := "http://" + addr + d.App.LoadPath
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := dockerTry("exec", client, "curl", "-sf", "-o", "/dev/null", "-m", "2", url)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer from %s after 2 minutes: %v %s", url, client, err, out)
		}
		time.Sleep(time.Second)
	}
	req := orchestrator.LoadRequest{StepID: "swarm-nodes-test", URL: url,
		Args: []string{"-t1", "-c2", "-d2s", "-R20", "--allow-host", strings.Split(addr, ":")[0]}, Bound: 3 * time.Minute}
	began := time.Now()
	res, raw, err := o.Load.Run(ctx, req)
	if err != nil {
		t.Fatalf("load job at %s: %v\n%s", addr, err, raw)
	}
	t.Logf("figure: load job at %s: %d requests, errors %+v, done %.1f s after its creation; output %d bytes", addr, res.Requests, res.Errors, time.Since(began).Seconds(), len(raw))
	if res.Requests == 0 || res.Errors.Total()+res.Errors.Status > 0 || len(raw) == 0 {
		t.Errorf("load job at %s: %d requests, %d errors, %d bytes of output: want requests without errors and the generator's output", addr, res.Requests, res.Errors.Total()+res.Errors.Status, len(raw))
	}
}

// publishedEntry is ADDR:PORT of a running task's published entry port, on
// the address of the worker it runs on, from the Swarm API.
func publishedEntry(t *testing.T, ctx context.Context, c *mobyclient.Client, d *orchestrator.Deployment) string {
	t.Helper()
	tasks, err := c.TaskList(ctx, mobyclient.TaskListOptions{Filters: mobyclient.Filters{}.Add("label", swarm.LabelJob+"="+d.Job).Add("desired-state", "running")})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := c.NodeList(ctx, mobyclient.NodeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks.Items {
		if task.Status.State != mobyswarm.TaskStateRunning || task.Status.PortStatus.Ports == nil {
			continue
		}
		for _, n := range nodes.Items {
			if n.ID == task.NodeID && len(task.Status.PortStatus.Ports) > 0 {
				return fmt.Sprintf("%s:%d", n.Status.Addr, task.Status.PortStatus.Ports[0].PublishedPort)
			}
		}
	}
	t.Fatalf("no running task of %s publishes a port", d.Job)
	return ""
}

// unreachableEngine: with the engine port of the second instance's worker
// refused inside that node's network namespace (the host's rules are not
// touched), a fresh adapter (nothing cached) fails reading that task's
// container and the job's events, naming the worker and its engine's
// address; the rule is removed at the end.
func unreachableEngine(t *testing.T, ctx context.Context, manager string, d *orchestrator.Deployment, ins []orchestrator.Instance) {
	in := ins[len(ins)-1]
	rule := []string{"INPUT", "-p", "tcp", "--dport", "2375", "-j", "REJECT", "--reject-with", "tcp-reset"}
	dockerOut(t, append([]string{"exec", in.Node, "iptables", "-I"}, rule...)...)
	defer dockerOut(t, append([]string{"exec", in.Node, "iptables", "-D"}, rule...)...)
	fresh, err := swarm.New(engineAddr(manager))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{in.Node, nodeAddr(in.Node) + ":2375"}
	_, err = fresh.Engine.ContainerPID(ctx, in.ID)
	t.Logf("wrong setup (%s refuses its engine port): ContainerPID: %v", in.Node, err)
	if err == nil || !strings.Contains(err.Error(), want[0]) || !strings.Contains(err.Error(), want[1]) {
		t.Errorf("ContainerPID of task %s with its node's engine refused: %v; want an error naming %v", in.ID, err, want)
	}
	_, err = fresh.TaskEvents(ctx, d, time.Now().Add(-time.Minute))
	t.Logf("wrong setup: TaskEvents: %v", err)
	if err == nil || !strings.Contains(err.Error(), want[0]) || !strings.Contains(err.Error(), want[1]) {
		t.Errorf("TaskEvents with %s's engine refused: %v; want an error naming %v", in.Node, err, want)
	}
}

// swarmFromClient: orchbench built static and run on the client node with
// what nodes.sh env prints (env) deploys Taewa on the workers' swarm and
// destroys it, which looks for leftover containers on every node's
// engine; with a worker refusing its engine port, destroy fails naming it.
func swarmFromClient(t *testing.T, ctx context.Context, env []string) {
	dir := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", dir+"/orchbench", "./harness/cmd/orchbench")
	build.Dir, build.Env = repoRoot(t), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build of orchbench: %v\n%s", err, out)
	}
	const work = "/opt/obn/harness"
	dockerOut(t, "exec", client, "mkdir", "-p", work+"/packs")
	dockerOut(t, "cp", dir+"/orchbench", client+":"+work+"/orchbench")
	dockerOut(t, "cp", repoRoot(t)+"/packs/taewa", client+":"+work+"/packs/")
	t.Cleanup(func() { _, _ = dockerTry("exec", client, "rm", "-rf", work) })
	orchbench := func(args ...string) (string, error) {
		cmd := []string{"exec", "-w", work}
		for _, e := range env {
			cmd = append(cmd, "-e", e)
		}
		return dockerTry(append(append(cmd, client, "./orchbench"), args...)...)
	}
	vars := []string{"taewa", "--orchestrator", "swarm", "--var", "job_name=sw-fromclient", "--var", "resource_scale=0.03", "--var", "scale=2", "--var", "placement=spread"}
	out, err := orchbench(append([]string{"pack", "run"}, vars...)...)
	if err != nil {
		t.Fatalf("pack run on %s: %v\n%s", client, err, out)
	}
	t.Logf("%s: orchbench pack run: %s", client, out)
	t.Cleanup(func() { _, _ = orchbench(append([]string{"pack", "destroy"}, vars...)...) })
	deadline := time.Now().Add(3 * time.Minute)
	var nodes []string
	for len(nodes) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("sw-fromclient: tasks running on %v after 3 minutes", nodes)
		}
		time.Sleep(2 * time.Second)
		nodes = nil
		for _, w := range workers {
			// a worker the cluster's shape lacks is no node to look at
			if ids, err := dockerTry("exec", w, "docker", "ps", "-q", "--filter", "label="+swarm.LabelJob+"=sw-fromclient"); err == nil && ids != "" {
				nodes = append(nodes, w)
			}
		}
	}
	t.Logf("sw-fromclient runs on %v", nodes)

	rule := []string{"INPUT", "-p", "tcp", "--dport", "2375", "-j", "REJECT", "--reject-with", "tcp-reset"}
	dockerOut(t, append([]string{"exec", nodes[0], "iptables", "-I"}, rule...)...)
	out, err = orchbench(append([]string{"pack", "destroy"}, vars...)...)
	dockerOut(t, append([]string{"exec", nodes[0], "iptables", "-D"}, rule...)...)
	t.Logf("wrong setup (%s refuses its engine port): pack destroy from %s: %v %s", nodes[0], client, err, out)
	if err == nil || !strings.Contains(out, nodes[0]) || !strings.Contains(out, nodeAddr(nodes[0])+":2375") {
		t.Errorf("pack destroy with %s's engine refused: %v %s; want a failure naming it and its address", nodes[0], err, out)
	}
	if out, err := orchbench(append([]string{"pack", "destroy"}, vars...)...); err != nil {
		t.Fatalf("pack destroy on %s: %v\n%s", client, err, out)
	}
	for _, w := range nodes {
		if left := dockerOut(t, "exec", w, "docker", "ps", "-aq", "--filter", "label="+swarm.LabelJob+"=sw-fromclient"); left != "" {
			t.Errorf("after pack destroy from %s, %s still has containers: %s", client, w, left)
		}
	}
}
