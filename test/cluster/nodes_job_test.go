//go:build multinode

package cluster

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// taskMHz is what each instance of the spread job asks; its CFS quota
// follows from the node's fingerprint (checkTaskInsideNodeBudget).
const taskMHz = 325

// spreadJob: three Taewa instances, one per worker (distinct_hosts among
// class "worker"), each on a host port of its node.
var spreadJob = fmt.Sprintf(`job "obn-spread" {
  datacenters = ["dc1"]
  group "web" {
    count = 3
    constraint {
      attribute = "${node.class}"
      value     = "worker"
    }
    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }
    network {
      port "http" {}
    }
    task "taewa" {
      driver = "docker"
      config {
        image          = %q
        network_mode   = "host"
        ports          = ["http"]
        cpu_hard_limit = true
      }
      env {
        PORT = "${NOMAD_PORT_http}"
      }
      resources {
        cpu    = %d
        memory = 64
      }
    }
  }
}
`, taewaImage, taskMHz)

type alloc struct {
	ID, NodeName, ClientStatus string
	addr                       string
}

type allocDetail struct {
	AllocatedResources struct {
		Shared struct {
			Networks []struct {
				IP           string
				DynamicPorts []struct {
					Label string
					Value int
				}
			}
		}
	}
}

// runSpreadJob submits the job and waits until its three allocations run,
// each on another worker.
func runSpreadJob(t *testing.T) []alloc {
	t.Helper()
	cmd := exec.Command("docker", "exec", "-i", server1, "/opt/obn/bin/nomad", "job", "run", "-detach",
		"-address", "http://"+nodeAddr(server1)+":4646", "-")
	cmd.Stdin = strings.NewReader(spreadJob)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nomad job run: %v\n%s", err, out)
	}
	began := time.Now()
	var running []alloc
	for time.Since(began) < 2*time.Minute {
		var all []alloc
		mustAPI(t, server1, 4646, "/v1/job/obn-spread/allocations", &all)
		running = running[:0]
		for _, a := range all {
			if a.ClientStatus == "running" {
				running = append(running, a)
			}
		}
		if len(running) == 3 {
			break
		}
		time.Sleep(time.Second)
	}
	if len(running) != 3 {
		t.Fatalf("%d of 3 allocations running after 2 minutes", len(running))
	}
	t.Logf("figure: 3 allocations running %.1f s after submission", time.Since(began).Seconds())
	seen := map[string]bool{}
	for i, a := range running {
		if !strings.HasPrefix(a.NodeName, clusterName+"-worker") {
			t.Errorf("allocation %s runs on %s, not a worker", a.ID, a.NodeName)
		}
		if seen[a.NodeName] {
			t.Errorf("two allocations on %s", a.NodeName)
		}
		seen[a.NodeName] = true
		var d allocDetail
		mustAPI(t, server1, 4646, "/v1/allocation/"+a.ID, &d)
		if n := d.AllocatedResources.Shared.Networks; len(n) == 1 && len(n[0].DynamicPorts) == 1 {
			running[i].addr = fmt.Sprintf("%s:%d", n[0].IP, n[0].DynamicPorts[0].Value)
		} else {
			t.Fatalf("allocation %s: no single dynamic port in %+v", a.ID, n)
		}
	}
	return running
}

// The client node reaches every instance at its worker's address, across
// the nodes' network, as a load generator on its own machine would.
func checkAnswersFromClient(t *testing.T, a alloc) {
	t.Helper()
	if want := nodeAddr(a.NodeName); !strings.HasPrefix(a.addr, want+":") {
		t.Errorf("allocation on %s listens on %s, not its node's address %s", a.NodeName, a.addr, want)
	}
	// "running" is the container started, not the server listening yet
	var code string
	var err error
	for began := time.Now(); time.Since(began) < 30*time.Second; time.Sleep(500 * time.Millisecond) {
		code, err = dockerTry("exec", client, "curl", "-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", "http://"+a.addr+"/")
		if err == nil && code == "200" {
			return
		}
	}
	t.Errorf("from %s, http://%s/ (on %s) answered %q within 30 s: %v", client, a.addr, a.NodeName, code, err)
}

// A task's cgroup sits under its node's, so the node's budget bounds it,
// and its quota is what Nomad's docker driver derives from the ask: MHz /
// the node's compute x the cores the node sees.
func checkTaskInsideNodeBudget(t *testing.T, a alloc) {
	t.Helper()
	ctr := dockerOut(t, "exec", a.NodeName, "docker", "ps", "-q", "--filter", "label=com.hashicorp.nomad.alloc_id="+a.ID)
	pid := dockerOut(t, "exec", a.NodeName, "docker", "inspect", "-f", "{{.State.Pid}}", ctr)
	nodeCg := cpuCgroup(t, dockerOut(t, "exec", a.NodeName, "cat", "/proc/1/cgroup"))
	taskCg := cpuCgroup(t, dockerOut(t, "exec", a.NodeName, "cat", "/proc/"+pid+"/cgroup"))
	if !strings.HasPrefix(taskCg, nodeCg+"/") {
		t.Fatalf("task on %s is in cgroup %s, outside its node's %s", a.NodeName, taskCg, nodeCg)
	}
	nodeQuota := readInt(t, filepath.Join("/sys/fs/cgroup/cpu", nodeCg, "cpu.cfs_quota_us"))
	taskQuota := readInt(t, filepath.Join("/sys/fs/cgroup/cpu", taskCg, "cpu.cfs_quota_us"))
	var node struct {
		NodeResources struct{ Cpu struct{ CpuShares int } }
		Attributes    map[string]string
	}
	var nodes []nomadNode
	mustAPI(t, server1, 4646, "/v1/nodes", &nodes)
	for _, n := range nodes {
		if n.Name == a.NodeName {
			mustAPI(t, server1, 4646, "/v1/node/"+n.ID, &node)
		}
	}
	cores, _ := strconv.Atoi(node.Attributes["cpu.numcores"])
	want := float64(taskMHz) / float64(node.NodeResources.Cpu.CpuShares) * float64(cores) * 100000
	if nodeQuota <= 0 || taskQuota <= 0 || taskQuota > nodeQuota || math.Abs(float64(taskQuota)-want) > 0.01*want {
		t.Errorf("%s: task quota %d µs (want %.0f: %d MHz of %d on %d cores), node quota %d µs",
			a.NodeName, taskQuota, want, taskMHz, node.NodeResources.Cpu.CpuShares, cores, nodeQuota)
	}
	t.Logf("figure: %s task cgroup %s, quota %d µs of its node's %d µs", a.NodeName, taskCg, taskQuota, nodeQuota)
}

// cpuCgroup is the cpu hierarchy's path in a /proc/PID/cgroup text.
func cpuCgroup(t *testing.T, procCgroup string) string {
	t.Helper()
	for _, line := range strings.Split(procCgroup, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && (f[1] == "cpu" || strings.HasPrefix(f[1], "cpu,") || strings.Contains(f[1], ",cpu,") || strings.HasSuffix(f[1], ",cpu")) {
			return f[2]
		}
	}
	t.Fatalf("no cpu cgroup in %q", procCgroup)
	return ""
}

func readInt(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// The Nomad leader's node dies at once (docker kill); the two servers left
// elect another within 30 s, and Consul and Swarm have a leader among them
// within 30 s too (a new one when the dead node led them as well).
func checkLeaderLoss(t *testing.T) {
	var leader string
	mustAPI(t, server1, 4646, "/v1/status/leader", &leader)
	var dead string
	for _, s := range servers {
		if strings.HasPrefix(leader, nodeAddr(s)+":") {
			dead = s
		}
	}
	if dead == "" {
		t.Fatalf("nomad leader %q is no server node", leader)
	}
	var left []string
	for _, s := range servers {
		if s != dead {
			left = append(left, s)
		}
	}
	// each control plane is polled on its own: a Swarm manager's CLI waits
	// for the election, which would delay the others' readings
	leaderOf := map[string]func() string{
		"nomad":  func() string { return apiLeader(left[0], 4646, dead) },
		"consul": func() string { return apiLeader(left[0], 8500, dead) },
		"swarm": func() string {
			out, _ := dockerTry("exec", left[0], "docker", "node", "ls", "--filter", "role=manager", "--format", "{{.Hostname}} {{.ManagerStatus}}")
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[1] == "Leader" && f[0] != dead {
					return f[0]
				}
			}
			return ""
		},
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	newLeader := map[string]time.Duration{}
	killed := time.Now()
	dockerOut(t, "kill", dead)
	for name, leader := range leaderOf {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(killed) < 30*time.Second {
				if l := leader(); l != "" {
					mu.Lock()
					newLeader[name] = time.Since(killed)
					mu.Unlock()
					t.Logf("figure: %s leader %s, %.1f s after %s was killed", name, l, time.Since(killed).Seconds(), dead)
					return
				}
				time.Sleep(250 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	if _, ok := newLeader["nomad"]; !ok {
		t.Fatalf("no new nomad leader within 30 s of killing %s", dead)
	}
	if _, ok := newLeader["consul"]; !ok {
		t.Errorf("consul has no leader among %v within 30 s of killing %s", left, dead)
	}
	if _, ok := newLeader["swarm"]; !ok {
		out, _ := dockerTry("exec", left[0], "docker", "node", "ls", "--format", "{{.Hostname}} {{.ManagerStatus}} {{.Status}}")
		t.Errorf("swarm names no leader among %v within 30 s of killing %s:\n%s", left, dead, out)
	}
}

// apiLeader is the raft leader the agent on NODE names, empty when it
// names none or names the node DEAD.
func apiLeader(node string, port int, dead string) string {
	var l string
	if api(node, port, "/v1/status/leader", &l) != nil || strings.HasPrefix(l, nodeAddr(dead)+":") {
		return ""
	}
	return l
}

// Nothing of the nodes stays on the host: no container, network or volume
// named after the cluster, no node cgroup in any hierarchy.
func checkNothingLeft(t *testing.T) {
	for _, kind := range [][]string{
		{"ps", "-a", "--filter", "name=" + clusterName + "-", "--format", "{{.Names}}"},
		{"network", "ls", "--filter", "name=" + clusterName + "-", "--format", "{{.Name}}"},
		{"volume", "ls", "--filter", "name=" + clusterName + "-", "--format", "{{.Name}}"},
	} {
		if out := dockerOut(t, kind...); out != "" {
			t.Errorf("docker %s: left after down: %s", kind[0], out)
		}
	}
	left, _ := filepath.Glob("/sys/fs/cgroup/*/" + clusterName + "-nodes")
	if len(left) > 0 {
		t.Errorf("node cgroups left after down: %v", left)
	}
}
