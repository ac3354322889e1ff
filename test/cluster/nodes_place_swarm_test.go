//go:build multinode

package cluster

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/orchestrator/swarm"
	"github.com/orchbench/orchbench/harness/placement"
)

// swarmPlacement: the Swarm services the harness's translation makes of
// Taewa with 3 replicas, created on the nodes' swarm with the CLI of the
// first manager (the harness reaches no node's dockerd from the host):
// spread lands on 3 workers, packed on worker1, neither on the client;
// spread with 4 replicas leaves one pending.
func swarmPlacement(t *testing.T, o *nomad.Orchestrator, registry imageref.Registry) {
	manager := firstServer(t)
	for _, c := range []struct {
		mode     placement.Mode
		replicas int
		nodes    int
	}{{placement.Spread, 3, 3}, {placement.Packed, 3, 1}, {placement.Spread, 4, 3}} {
		name := fmt.Sprintf("pl-%s-%d", c.mode, c.replicas)
		jobs := render(t, o, registry, map[string]string{"resource_scale": "0.03", "scale": strconv.Itoa(c.replicas), "job_name": name, placement.Variable: string(c.mode)})
		plan, err := swarm.Translate(jobs[0], swarm.Options{MHzPerCore: 2100})
		if err != nil {
			t.Fatal(err)
		}
		var args []string
		for _, s := range plan.Specs {
			pl := s.TaskTemplate.Placement
			args = []string{"exec", manager, "docker", "service", "create", "--detach", "--quiet", "--name", name, "--replicas", strconv.Itoa(c.replicas),
				"--limit-cpu", "0.03", "--limit-memory", "32m"}
			if pl != nil && pl.MaxReplicas > 0 {
				args = append(args, "--replicas-max-per-node", strconv.FormatUint(pl.MaxReplicas, 10))
			}
			if pl != nil {
				for _, con := range pl.Constraints {
					args = append(args, "--constraint", con)
				}
			}
			args = append(args, s.TaskTemplate.ContainerSpec.Image)
		}
		dockerOut(t, args...)
		t.Cleanup(func() { _, _ = dockerTry("exec", manager, "docker", "service", "rm", name) })
		running, pending := swarmTasks(t, manager, name, min(c.replicas, 3))
		t.Logf("swarm, placement %s, %d replicas: running on %v, %d pending %s", c.mode, c.replicas, running, len(pending), strings.Join(pending, "; "))
		if distinct(running) != c.nodes || len(running) != min(c.replicas, 3) {
			t.Errorf("swarm, placement %s, %d replicas: running on %v, want %d nodes", c.mode, c.replicas, running, c.nodes)
		}
		for _, n := range running {
			if !strings.Contains(n, "-worker") || (c.mode == placement.Packed && n != clusterName+"-worker1") {
				t.Errorf("swarm, placement %s: a task on %s", c.mode, n)
			}
		}
		if c.replicas > 3 && (len(pending) != c.replicas-3 || !strings.Contains(strings.Join(pending, ""), "max replicas per node")) {
			t.Errorf("swarm, spread of 4 on 3 workers: pending %q, want one held by the max replicas per node", pending)
		}
		_, _ = dockerTry("exec", manager, "docker", "service", "rm", name)
	}
}

// swarmTasks waits until the service has `want` running tasks (or 3
// minutes) and returns their nodes and the pending tasks' errors.
func swarmTasks(t *testing.T, manager, service string, want int) (running, pending []string) {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		running, pending = nil, nil
		out, _ := dockerTry("exec", manager, "docker", "service", "ps", service, "--no-trunc", "--filter", "desired-state=running", "--format", "{{.Node}}|{{.CurrentState}}|{{.Error}}")
		for _, line := range strings.Split(out, "\n") {
			f := strings.SplitN(line, "|", 3)
			if len(f) < 3 {
				continue
			}
			switch {
			case strings.HasPrefix(f[1], "Running"):
				running = append(running, f[0])
			case strings.HasPrefix(f[1], "Pending"):
				pending = append(pending, f[2])
			}
		}
		sort.Strings(running)
		if len(running) >= want || time.Now().After(deadline) {
			return running, pending
		}
		time.Sleep(2 * time.Second)
	}
}

// budgets: what each scheduler takes a node's capacity to be. Nomad's
// memory is the node's budget (memory_total_mb), so a task asking more
// than a worker has is not placed; its CPU, and Swarm's CPU and memory,
// are the machine's, so Swarm places a reservation beyond the node's
// memory budget (docs/cluster.md, "Budgets the schedulers see").
func budgets(t *testing.T, o *nomad.Orchestrator) {
	ctx := context.Background()
	c, err := o.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	limit := dockerOut(t, "inspect", "-f", "{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}", clusterName+"-worker1")
	var memBytes, nanoCPUs int64
	fmt.Sscan(limit, &memBytes, &nanoCPUs)
	t.Logf("figure: worker1 budget --memory %d MiB --cpus %.2f; Nomad sees %d MiB, %d cores at %.0f MHz", memBytes>>20, float64(nanoCPUs)/1e9, c.MemoryMiB, c.Cores, c.MHzPerCore)
	if int64(c.MemoryMiB) != memBytes>>20 {
		t.Errorf("Nomad's memory %d MiB is not the node's budget %d MiB", c.MemoryMiB, memBytes>>20)
	}
	manager := firstServer(t)
	sw := dockerOut(t, "exec", manager, "docker", "node", "inspect", clusterName+"-worker1", "--format", "{{.Description.Resources.NanoCPUs}} {{.Description.Resources.MemoryBytes}}")
	var swNano, swMem int64
	fmt.Sscan(sw, &swNano, &swMem)
	t.Logf("figure: Swarm sees worker1 with %.2f CPUs and %d MiB", float64(swNano)/1e9, swMem>>20)

	// a reservation beyond the node: Nomad refuses it, Swarm places it
	over := (memBytes >> 20) + 512
	jobs := render(t, o, "", map[string]string{"resource_scale": "0.03", "job_name": "taewa-over"})
	jobs[0].TaskGroups[0].Tasks[0].Resources.MemoryMB = ptrInt(int(over))
	if _, err := deploy(t, o, jobs[0], time.Minute); err == nil || !strings.Contains(err.Error(), "memory") {
		t.Errorf("Nomad placed %d MiB on workers of %d MiB: %v", over, memBytes>>20, err)
	} else {
		t.Logf("Nomad refuses %d MiB on %d MiB workers: %v", over, memBytes>>20, err)
	}
	name := "pl-over"
	dockerOut(t, "exec", manager, "docker", "service", "create", "--detach", "--quiet", "--name", name, "--reserve-memory", fmt.Sprintf("%dm", over),
		"--constraint", "node.labels.orchbench.role==worker", "--limit-cpu", "0.03", imageref.Registry(nodeAddr(client)+":5000").Ref(taewaImage))
	defer dockerTry("exec", manager, "docker", "service", "rm", name)
	running, pending := swarmTasks(t, manager, name, 1)
	t.Logf("Swarm, a %d MiB reservation on %d MiB workers: running on %v, pending %q", over, memBytes>>20, running, pending)
	if swMem > memBytes && len(running) != 1 {
		t.Errorf("Swarm sees %d MiB per node but did not place %d MiB", swMem>>20, over)
	}
}

func ptrInt(v int) *int { return &v }

// absentKeysPass: every constraint placement makes is a "!=", which a node
// without the key satisfies, on Nomad and on Swarm alike: that is what
// keeps the single-node cluster, whose node carries none of the keys,
// placing as before. A key no node has stands in for it here.
func absentKeysPass(t *testing.T, o *nomad.Orchestrator, registry imageref.Registry) {
	jobs := render(t, o, registry, map[string]string{"resource_scale": "0.03", "job_name": "taewa-absent"})
	g := jobs[0].TaskGroups[0]
	g.Constraints = append(g.Constraints, &nomadapi.Constraint{LTarget: placement.MetaAttr("orchbench.absent"), Operand: "!=", RTarget: "x"})
	if _, err := deploy(t, o, jobs[0], 3*time.Minute); err != nil {
		t.Errorf("Nomad: a != on a key no node has did not place: %v", err)
	}
	manager := firstServer(t)
	name := "pl-absent"
	dockerOut(t, "exec", manager, "docker", "service", "create", "--detach", "--quiet", "--name", name, "--limit-cpu", "0.03",
		"--constraint", placement.SwarmNotOn("orchbench.absent", "x"), registry.Ref(taewaImage))
	defer dockerTry("exec", manager, "docker", "service", "rm", name)
	if running, pending := swarmTasks(t, manager, name, 1); len(running) != 1 {
		t.Errorf("Swarm: a != on a label no node has did not place: pending %q", pending)
	}
}
