//go:build multinode

package cluster

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/kubernetes"
)

// Settings the test brings Kubernetes up with: pods leave a lost node after
// k8sEviction seconds, a silent node is NotReady after k8sGrace (Kubernetes'
// own defaults, 300 s and 50 s, would make the kill-node below take minutes).
const (
	k8sEviction = 20
	k8sGrace    = 20
	k8sJob      = "k8taewa"
)

// TestNodesKubernetes: Kubernetes across the emulated nodes (nodes.sh up
// ... k8s=1): an etcd member and an API server on every server with one
// etcd leader and one lease holder each for the controller manager and the
// scheduler, a Ready kubelet on every worker and the client and none on
// the servers; orchbench on the client node runs Taewa with scale 2 spread
// over the workers, its images pulled from the client node's registry; the
// pods' limits are read through the node-probe DaemonSet on their workers
// (the probes are found through the API, none is local); a worker with a
// pod is killed and the pod is measured until it runs again on another
// worker; down leaves nothing. NODES_K8S_SHAPE (default 4/3) is
// nodes/servers:
//
// The client node's balancer (3 servers) is the tcp-balance command of the
// orchbench binary nodes.sh copies (ORCHBENCH_BIN, default .tools/bin/orchbench).
//
//	NODES_NAME=ks NODES_SUBNET=10.82.0.0/24 NODES_K8S_SHAPE=4/1 go test -tags multinode -count=1 -timeout 40m -v -run TestNodesKubernetes ./test/cluster/
func TestNodesKubernetes(t *testing.T) {
	requireNodeHost(t, "just images taewa orchbench; just k8s-up once for the CoreDNS image", taewaImage, orchestrator.DefaultLoadImage, "orchbench/coredns:local")
	n, s := 4, 3
	if _, err := fmt.Sscanf(envOr("NODES_K8S_SHAPE", "4/3"), "%d/%d", &n, &s); err != nil || n < 4 {
		t.Fatalf("NODES_K8S_SHAPE=%s: nodes/servers with nodes >= 4 is needed (3 workers: one is killed, two keep the spread)", os.Getenv("NODES_K8S_SHAPE"))
	}
	requireNoNodes(t)
	t.Cleanup(func() {
		if t.Failed() {
			for _, node := range append(append([]string{}, servers[:s]...), append(workers[:n-1], client)...) {
				if out, err := exec.Command("docker", "exec", node, "sh", "-c", "tail -n 8 /var/log/obn/*.log").CombinedOutput(); err == nil {
					t.Logf("%s logs:\n%s", node, out)
				}
			}
		}
		runScript(t, nil, "nodes.sh", "down")
	})
	began := time.Now()
	up := runScript(t, nil, "nodes.sh", "up", fmt.Sprint(n), fmt.Sprint(s), "k8s=1",
		fmt.Sprintf("k8s_eviction=%d", k8sEviction), fmt.Sprintf("k8s_grace=%d", k8sGrace), "node_memory=2g")
	if up.err != nil {
		t.Fatalf("nodes.sh up %d %d k8s=1: %v\n%s%s", n, s, up.err, up.stdout, up.stderr)
	}
	k8sPart := "?"
	if _, rest, ok := strings.Cut(up.stdout, "kubernetes up in "); ok {
		k8sPart, _, _ = strings.Cut(rest, ":")
	}
	t.Logf("figure: up %d %d k8s=1 in %.1f s (Kubernetes' part %s)", n, s, time.Since(began).Seconds(), k8sPart)
	kubeconfig := filepath.Join(repoRoot(t), ".state", "nodes", clusterName, "kubernetes", "admin.kubeconfig")
	if env := runScript(t, nil, "nodes.sh", "env"); env.err != nil || !strings.Contains(env.stdout, "export ORCHBENCH_KUBECONFIG="+kubeconfig+"\n") || !strings.Contains(env.stdout, "export ORCHBENCH_K8S_NETNS=host") ||
		!strings.Contains(env.stdout, "export ORCHBENCH_K8S_CLIENT_NETNS=/proc/"+dockerOut(t, "inspect", "-f", "{{.State.Pid}}", client)+"/ns/net\n") {
		t.Errorf("nodes.sh env does not point orchbench at %s: %v\n%s%s", kubeconfig, env.err, env.stdout, env.stderr)
	}
	k8sStatus(t, n, s)
	k8sLeaders(t, s)
	kubectl := func(args ...string) (string, error) {
		out, err := exec.Command(filepath.Join(repoRoot(t), ".tools", "bin", "kubectl"), append([]string{"--kubeconfig", kubeconfig, "--request-timeout", "10s"}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	k8sRegistered(t, kubectl, n, s)

	if r := runScript(t, nil, "nodes.sh", "push-images", taewaImage); r.err != nil {
		t.Fatalf("push-images: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	orchbench := k8sHarnessOnClient(t, ctx, kubeconfig)
	vars := []string{"taewa", "--orchestrator", "kubernetes", "--var", "job_name=" + k8sJob, "--var", "resource_scale=0.03", "--var", "scale=2", "--var", "placement=spread"}
	began = time.Now()
	out, err := orchbench(append(append([]string{"pack", "run"}, vars...), "--wait", "--timeout", "8m")...)
	if err != nil {
		t.Fatalf("pack run --wait on %s: %v\n%s", client, err, out)
	}
	t.Logf("figure: pack run taewa scale=2 --wait from %s in %.1f s:\n%s", client, time.Since(began).Seconds(), out)
	podNodes := k8sPodNodes(t, kubectl)
	if len(podNodes) != 2 || podNodes[0] == podNodes[1] || !strings.HasPrefix(podNodes[0], clusterName+"-worker") || !strings.HasPrefix(podNodes[1], clusterName+"-worker") {
		t.Fatalf("pods of %s on %v, want 2 distinct workers", k8sJob, podNodes)
	}

	o, err := kubernetes.New(kubernetes.Access{Kubeconfig: kubeconfig}, orchestrator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("limits through the probes", func(t *testing.T) { k8sLimitsThroughProbes(t, ctx, o, kubeconfig, podNodes) })
	t.Run("kill a worker", func(t *testing.T) { k8sKillWorker(t, kubectl, podNodes) })
	if s == 3 {
		t.Run("kill the etcd leader", func(t *testing.T) { k8sKillLeader(t, kubectl) })
	}

	began = time.Now()
	if down := runScript(t, nil, "nodes.sh", "down"); down.err != nil {
		t.Fatalf("nodes.sh down: %v\n%s%s", down.err, down.stdout, down.stderr)
	}
	t.Logf("figure: down in %.1f s", time.Since(began).Seconds())
	checkNothingLeft(t)
	if _, err := os.Stat(filepath.Dir(filepath.Dir(kubeconfig))); !os.IsNotExist(err) {
		t.Errorf("the cluster's state directory %s is left after down (%v)", filepath.Dir(filepath.Dir(kubeconfig)), err)
	}
}

// k8sStatus: nodes.sh status shows Kubernetes beside the other control
// planes: each server an etcd member with a ready API server, every other
// node a Ready Kubernetes node, one etcd leader, both leases held.
func k8sStatus(t *testing.T, n, s int) {
	st := runScript(t, nil, "nodes.sh", "status")
	t.Logf("nodes.sh status:\n%s", st.stdout)
	if st.err != nil || !strings.Contains(st.stdout, "KUBERNETES") || !strings.Contains(st.stdout, "kubernetes: etcd leader "+clusterName+"-server") {
		t.Fatalf("status: %v; want a KUBERNETES column and the etcd leader\n%s%s", st.err, st.stdout, st.stderr)
	}
	if got := strings.Count(st.stdout, "etcd:leader:api:ok"); got != 1 {
		t.Errorf("status lists %d etcd leaders with a ready API server, want 1", got)
	}
	if got := strings.Count(st.stdout, "etcd:follower:api:ok"); got != s-1 {
		t.Errorf("status lists %d etcd followers with a ready API server, want %d", got, s-1)
	}
	if got := strings.Count(st.stdout, "node:Ready"); got != n {
		t.Errorf("status lists %d ready Kubernetes nodes, want %d (the workers and the client)", got, n)
	}
	for _, lease := range []string{"kube-controller-manager lease " + clusterName + "-server", "kube-scheduler lease " + clusterName + "-server", fmt.Sprintf("evicted %d s after", k8sEviction)} {
		if !strings.Contains(st.stdout, lease) {
			t.Errorf("status does not say %q", lease)
		}
	}
	// a wrong setup: the API servers stopped, status must fail and say so
	if s == 1 {
		return
	}
	stopped := servers[0]
	dockerOut(t, "exec", stopped, "sh", "-c", "kill $(cat /run/obn/kube-apiserver.pid)")
	defer dockerOut(t, "exec", "-d", stopped, "sh", "/etc/obn/run/kube-apiserver.sh")
	time.Sleep(2 * time.Second)
	bad := runScript(t, nil, "nodes.sh", "status")
	if bad.err == nil || !strings.Contains(bad.stdout, stopped+": not a healthy etcd member with a ready API server") {
		t.Errorf("status with %s's API server stopped: %v; want a failure naming it\n%s", stopped, bad.err, bad.stdout)
	}
}

// k8sLeaders: the harness's node seam finds the etcd leader and the
// controller manager's lease holder among the servers.
func k8sLeaders(t *testing.T, s int) {
	ctl, err := nodes.NewEmulated(clusterName)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range []nodes.ControlPlane{nodes.PlaneEtcd, nodes.PlaneKubeControllerManager} {
		var l nodes.Node
		deadline := time.Now().Add(time.Minute)
		for {
			l, err = ctl.Leader(context.Background(), cp)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Second)
		}
		if err != nil || l.Role != nodes.RoleServer {
			t.Errorf("%s leader: %+v, %v; want one of the %d servers", cp, l, err, s)
			continue
		}
		t.Logf("%s leader: %s", cp, l.Name)
	}
}

// k8sRegistered: the workers and the client are nodes, the servers are not;
// the client is tainted, every node carries its placement labels.
func k8sRegistered(t *testing.T, kubectl func(...string) (string, error), n, s int) {
	out, err := kubectl("get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.labels.orchbench\.role} {.spec.taints[*].key}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("kubectl get nodes: %v %s", err, out)
	}
	want := []string{client + " client orchbench.role"}
	for _, w := range workers[:n-1] {
		want = append(want, w+" worker")
	}
	got := strings.Split(out, "\n")
	for i := range got {
		got[i] = strings.TrimSpace(got[i])
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("kubernetes nodes (name role taints): %q, want %q (no server among %d)", got, want, s)
	}
}

// k8sHarnessOnClient copies a static orchbench, the Taewa pack and the
// kubeconfig into the client node and runs orchbench there, where the
// pods' and the Services' addresses are routed, as on a real cluster's
// client machine.
func k8sHarnessOnClient(t *testing.T, ctx context.Context, kubeconfig string) func(args ...string) (string, error) {
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
	dockerOut(t, "cp", kubeconfig, client+":"+work+"/kubeconfig")
	// Nomad (on the first server) parses the pack's job; the job runs on Kubernetes
	env := []string{"NOMAD_ADDR=http://" + nodeAddr(server1) + ":4646", "ORCHBENCH_KUBECONFIG=" + work + "/kubeconfig", "ORCHBENCH_K8S_NETNS=host", "ORCHBENCH_REGISTRY=" + nodeAddr(client) + ":5000"}
	return func(args ...string) (string, error) {
		cmd := []string{"exec", "-w", work}
		for _, e := range env {
			cmd = append(cmd, "-e", e)
		}
		c := exec.CommandContext(ctx, "docker", append(append(cmd, client, "./orchbench"), args...)...)
		out, err := c.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
}

// k8sPodNodes are the nodes the job's running pods are bound to, sorted;
// a pod being deleted (its node lost, its kubelet silent) is not counted.
func k8sPodNodes(t *testing.T, kubectl func(...string) (string, error)) []string {
	out, err := kubectl("-n", "orchbench-"+k8sJob, "get", "pods", "--field-selector", "status.phase=Running", "-o", `jsonpath={range .items[*]}{.spec.nodeName} {.metadata.deletionTimestamp}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("kubectl get pods: %v %s", err, out)
	}
	var ns []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 1 {
			ns = append(ns, f[0])
		}
	}
	sort.Strings(ns)
	return ns
}

// k8sLimitsThroughProbes: the adapter's probes are the DaemonSet's, one per
// node at the node's own address; each pod's limits read through its
// worker's probe equal its declaration, and its cgroup sits under that
// worker's budget.
func k8sLimitsThroughProbes(t *testing.T, ctx context.Context, o *kubernetes.Orchestrator, kubeconfig string, podNodes []string) {
	probes, err := o.NodeProbes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range podNodes {
		c, ok := probes[w]
		if !ok || c.BaseURL != "http://"+nodeAddr(w)+":7071" {
			t.Fatalf("probe of %s: %+v (found %d probes); want the DaemonSet's at %s:7071", w, c, len(probes), nodeAddr(w))
		}
	}
	o2, err := kubernetes.New(kubernetes.Access{Kubeconfig: kubeconfig}, orchestrator.Config{Nodes: nodeprobe.FromClients(probes)})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := o2.Limits(ctx, &orchestrator.Deployment{Orchestrator: kubernetes.Name, Job: k8sJob})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 {
		t.Fatalf("limits of %d instances, want 2", len(ls))
	}
	for _, l := range ls {
		t.Logf("%s on %s: quota %.3f cores, memory %d MiB, cgroup %s (declared %.3f cores, %d MiB)", l.Instance.ID, l.Node, l.QuotaCores, l.MemoryLimitMiB, l.CgroupPath, l.Declared.Cores, l.Declared.MemoryMiB)
		if l.Declared.Cores == 0 || math.Abs(l.QuotaCores-l.Declared.Cores) > 0.001 || l.MemoryLimitMiB != l.Declared.MemoryMiB {
			t.Errorf("%s on %s: enforced %.3f cores %d MiB, declared %.3f cores %d MiB", l.Instance.ID, l.Node, l.QuotaCores, l.MemoryLimitMiB, l.Declared.Cores, l.Declared.MemoryMiB)
		}
		if !strings.Contains(l.CgroupPath, "/"+clusterName+"-nodes/") || !strings.Contains(l.CgroupPath, "/kube/kubepods") {
			t.Errorf("%s: cgroup %s is not under its node's budget (/%s-nodes/<node>/kube/kubepods)", l.Instance.ID, l.CgroupPath, clusterName)
		}
	}
	// a wrong setup: no probe for the pods' nodes, the limits must not be read
	if _, err := (func() ([]orchestrator.Limits, error) {
		o3, err := kubernetes.New(kubernetes.Access{Kubeconfig: kubeconfig}, orchestrator.Config{Nodes: nodeprobe.FromClients(map[string]*nodeprobe.Client{})})
		if err != nil {
			return nil, err
		}
		return o3.Limits(ctx, &orchestrator.Deployment{Orchestrator: kubernetes.Name, Job: k8sJob})
	})(); err == nil {
		t.Error("limits were read with no probe for the pods' nodes")
	}
}

// k8sKillWorker kills the first pod's worker and measures how long until
// both pods run again, on the two workers left.
func k8sKillWorker(t *testing.T, kubectl func(...string) (string, error), podNodes []string) {
	ctl, err := nodes.NewEmulated(clusterName)
	if err != nil {
		t.Fatal(err)
	}
	victim := podNodes[0]
	killed := time.Now()
	if err := ctl.Kill(context.Background(), victim); err != nil {
		t.Fatal(err)
	}
	var notReady time.Duration
	deadline := killed.Add(time.Duration(k8sEviction+k8sGrace)*time.Second + 4*time.Minute)
	for {
		if notReady == 0 {
			if st, _ := kubectl("get", "node", victim, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`); st != "True" {
				notReady = time.Since(killed)
			}
		}
		now := k8sPodNodes(t, kubectl)
		if len(now) == 2 && now[0] != now[1] && now[0] != victim && now[1] != victim {
			t.Logf("figure: kill-node %s: NotReady after %.1f s, both pods running again on %v %.1f s after the kill (node-monitor-grace-period %d s, eviction %d s)",
				victim, notReady.Seconds(), now, time.Since(killed).Seconds(), k8sGrace, k8sEviction)
			k8sRevive(t, ctl, kubectl, victim)
			return
		}
		if time.Now().After(deadline) {
			out, _ := kubectl("-n", "orchbench-"+k8sJob, "get", "pods", "-o", "wide")
			t.Fatalf("%s killed %.0f s ago: pods on %v\n%s", victim, time.Since(killed).Seconds(), now, out)
		}
		time.Sleep(2 * time.Second)
	}
}

// k8sKillLeader kills the etcd leader's server (HA on): another member
// leads, the API still answers through the balancer on the client node,
// and a pod deleted after the kill is replaced (the scheduler and the
// controller manager still act, from whichever server holds their lease).
func k8sKillLeader(t *testing.T, kubectl func(...string) (string, error)) {
	ctl, err := nodes.NewEmulated(clusterName)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old, err := ctl.Leader(ctx, nodes.PlaneEtcd)
	if err != nil {
		t.Fatal(err)
	}
	cm, _ := ctl.Leader(ctx, nodes.PlaneKubeControllerManager)
	killed := time.Now()
	if err := ctl.Kill(ctx, old.Name); err != nil {
		t.Fatal(err)
	}
	var elected time.Duration
	for elected == 0 {
		if n, err := ctl.Leader(ctx, nodes.PlaneEtcd); err == nil && n.Name != old.Name {
			elected = time.Since(killed)
			t.Logf("etcd leader %s after %s's", n.Name, old.Name)
		} else if time.Since(killed) > 2*time.Minute {
			t.Fatalf("no new etcd leader 2 minutes after %s was killed: %v", old.Name, err)
		} else {
			time.Sleep(time.Second)
		}
	}
	// a running pod: the one left on the worker killed before is being
	// deleted and stays so, its kubelet gone
	list, err := kubectl("-n", "orchbench-"+k8sJob, "get", "pods", "--field-selector", "status.phase=Running", "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("the API through the balancer after %s was killed: %v %s", old.Name, err, list)
	}
	pods := ""
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) == 1 {
			pods = f[0]
			break
		}
	}
	if pods == "" {
		t.Fatalf("no running pod of %s to delete:\n%s", k8sJob, list)
	}
	if out, err := kubectl("-n", "orchbench-"+k8sJob, "delete", "pod", pods, "--wait=false"); err != nil {
		t.Fatalf("delete pod %s: %v %s", pods, err, out)
	}
	for {
		now := k8sPodNodes(t, kubectl)
		if len(now) == 2 && !slices.Contains(now, "") {
			if out, _ := kubectl("-n", "orchbench-"+k8sJob, "get", "pod", pods); strings.Contains(out, "NotFound") || out == "" {
				break
			}
		}
		if time.Since(killed) > 4*time.Minute {
			out, _ := kubectl("-n", "orchbench-"+k8sJob, "get", "pods", "-o", "wide")
			t.Fatalf("pod %s deleted after %s was killed: not replaced within 4 minutes\n%s", pods, old.Name, out)
		}
		time.Sleep(2 * time.Second)
	}
	holder, _ := ctl.Leader(ctx, nodes.PlaneKubeControllerManager)
	t.Logf("figure: kill-leader %s (etcd leader; controller manager lease on %s, then %s): a new etcd leader after %.1f s, a deleted pod replaced %.1f s after the kill",
		old.Name, cm.Name, holder.Name, elected.Seconds(), time.Since(killed).Seconds())
}

// k8sRevive starts the killed worker again through the node seam (its
// agents' start scripts, Kubernetes' among them) and waits until it is a
// Ready node again.
func k8sRevive(t *testing.T, ctl *nodes.Emulated, kubectl func(...string) (string, error), node string) {
	began := time.Now()
	if err := ctl.Revive(context.Background(), node); err != nil {
		t.Fatalf("revive %s: %v", node, err)
	}
	for {
		st, _ := kubectl("get", "node", node, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if st == "True" {
			t.Logf("figure: %s revived and Ready again %.1f s after Revive", node, time.Since(began).Seconds())
			return
		}
		if time.Since(began) > 3*time.Minute {
			out, _ := dockerTry("exec", node, "tail", "-n", "5", "/var/log/obn/kubelet.log")
			t.Fatalf("%s revived 3 minutes ago is not Ready (%q); its kubelet:\n%s", node, st, out)
		}
		time.Sleep(2 * time.Second)
	}
}
