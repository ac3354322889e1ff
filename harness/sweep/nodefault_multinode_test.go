//go:build multinode

package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/testenv"
)

// Node faults against Nomad on the emulated cluster that is up (its shape
// decides what is asserted): Taewa with 2 instances on 2 workers, each
// worker with room for one only (taewaMemory), a bounded load from the
// client node spread over both, and each fault kind injected into it the
// way a sweep step does. Bring the cluster up first (docs/cluster.md):
//
//	NODES_NAME=fl NODES_SUBNET=10.79.0.0/24 just nodes-up nodes=3 servers=1 node_memory=1g
//	NODES_NAME=fl NODES_SUBNET=10.79.0.0/24 just nodes-images orchbench/taewa:local orchbench/pause:local orchbench/orchbench:local
//	NODES_NAME=fl go test -tags multinode -count=1 -timeout 30m -v -run TestNodeFaults ./harness/sweep/
//
// With 1 server (HA off) the killed worker's instance has nowhere to go and
// recovery must be reported missing; the killed leader stops scheduling
// until it returns. With 3 servers and 3 workers (HA on) the instance moves
// to the spare worker and a new leader places a job at once.
func TestNodeFaultsOnNomad(t *testing.T) {
	name := os.Getenv("NODES_NAME")
	if name == "" {
		testenv.Missing(t, "NODES_NAME is not set: bring an emulated cluster up and name it")
	}
	ctl, err := nodes.NewEmulated(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	all, err := ctl.Nodes(ctx)
	if err != nil {
		testenv.Missing(t, "%v", err)
	}
	servers, workers, clients := nodes.WithRole(all, nodes.RoleServer), nodes.WithRole(all, nodes.RoleWorker), nodes.WithRole(all, nodes.RoleClient)
	if len(clients) != 1 || len(workers) < 2 {
		t.Fatalf("the cluster has %d workers and %d client nodes; the test needs 2 or more and 1", len(workers), len(clients))
	}
	haOn := len(servers) == 3
	client := clients[0]
	// the client node's own agents forward to whichever server leads, as a
	// real cluster's local agents do: killing a server never cuts the harness off
	o, err := nomad.New("http://"+client.Address+":4646", "http://"+client.Address+":8500")
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Cluster: ctl, Out: io.Discard, Orchestrators: map[string]orchestrator.Orchestrator{"nomad": o}}
	checkShapeRefusal(t, r, haOn)

	w, err := orchestrator.NewWorkload(faultTaewaJob())
	if err != nil {
		t.Fatal(err)
	}
	dep, err := o.Deploy(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := o.Stop(context.Background(), dep); err != nil {
			t.Errorf("stop %s: %v", dep.Job, err)
		}
	})
	healthy(t, o, dep)

	t.Run("restart-agent", func(t *testing.T) {
		rec := faultStep(t, r, o, dep, client, experiment.Fault{Kind: orchestrator.FaultRestartAgent, Agent: "consul", After: 5 * time.Second}, 30*time.Second)
		mustRecover(t, rec)
		if rec.Node.Role != "worker" || !strings.Contains(rec.Node.Chosen, "runs an instance") || len(rec.OnNode) != 1 {
			t.Errorf("the agent was restarted on %+v with %d instances on it, want the worker of one instance", rec.Node, len(rec.OnNode))
		}
	})
	t.Run("partition-node", func(t *testing.T) {
		rec := faultStep(t, r, o, dep, client, experiment.Fault{Kind: orchestrator.FaultPartitionNode, Duration: 15 * time.Second, After: 5 * time.Second}, 50*time.Second)
		if rec.RestoredSeconds == nil || *rec.RestoredSeconds < 14 || *rec.RestoredSeconds > 25 {
			t.Errorf("the partition of 15 s ended after %v s", fmtSec(rec.RestoredSeconds))
		}
		mustRecover(t, rec)
		if *rec.AllHealthySeconds < *rec.RestoredSeconds {
			t.Errorf("recovered %.1f s after the cut, before it ended (%.1f s): the cut node's instance was counted", *rec.AllHealthySeconds, *rec.RestoredSeconds)
		}
		mustHurt(t, rec)
	})
	t.Run("kill-node", func(t *testing.T) {
		rec := faultStep(t, r, o, dep, client, experiment.Fault{Kind: orchestrator.FaultKillNode, After: 5 * time.Second}, 90*time.Second)
		mustHurt(t, rec)
		if haOn {
			mustRecover(t, rec)
		} else if rec.AllHealthySeconds != nil || !strings.Contains(rec.AllHealthyNote, "instances") {
			// the remaining worker has room for one instance only
			t.Errorf("with no worker to take the lost instance, recovery must be missing; got %v s, note %q", fmtSec(rec.AllHealthySeconds), rec.AllHealthyNote)
		}
		// no duration: the node stays down to the step's end (90 s from the
		// load's start, the fault at 5 s), recovered or not
		if rec.RestoredSeconds == nil || *rec.RestoredSeconds < 80 {
			t.Errorf("the node came back after %s s, not after the step: %s", fmtSec(rec.RestoredSeconds), rec.RestoreError)
		}
		healthy(t, o, dep)
	})
	t.Run("kill-leader", func(t *testing.T) {
		f := experiment.Fault{Kind: orchestrator.FaultKillLeader, After: 5 * time.Second}
		if !haOn {
			f.Duration = 20 * time.Second
		}
		rec := faultStep(t, r, o, dep, client, f, 60*time.Second)
		if rec.Node.Role != "server" || len(rec.Leaders) != 2 || rec.Leaders[0].Before != rec.Node.Name {
			t.Fatalf("kill-leader hit %+v, leaders %+v", rec.Node, rec.Leaders)
		}
		s := rec.Scheduling
		if s == nil {
			t.Fatal("no scheduling probe recorded")
		}
		t.Logf("figure: %s; nomad leader %+v", s, rec.Leaders[0])
		// the servers run no instance: the load, which reaches only the
		// workers, loses nothing to the leader's loss (the other faults'
		// mustHurt is the counterpart)
		if len(rec.Windows) < 2 || rec.Windows[1].Errors != 0 {
			t.Errorf("errors while the leader was away: %+v", rec.Windows)
		}
		if haOn {
			if !rec.Leaders[0].Changed() || s.PlacedSeconds == nil || *s.PlacedSeconds > 30 {
				t.Errorf("HA on: the leader must move and a job be placed soon; leader %+v, %s", rec.Leaders[0], s)
			}
		} else if s.PlacedSeconds == nil || *s.PlacedSeconds < 20 || s.Attempts == 0 {
			t.Errorf("HA off: no job may be placed before the server's return at 20 s; %s", s)
		}
		healthy(t, o, dep)
	})
}

// taewaMemory is more than half a worker's room (node_memory=1g: 768 MiB
// once the agents' 256 are reserved), so a worker runs one instance.
const taewaMemory = 500

func faultTaewaJob() *api.Job {
	str := func(s string) *string { return &s }
	two, cpu, mem := 2, 100, taewaMemory
	return &api.Job{
		ID: str("faults-taewa"), Name: str("faults-taewa"), Type: str("service"), Datacenters: []string{"dc1"},
		Meta: map[string]string{"orchbench_service": "faults-taewa"},
		TaskGroups: []*api.TaskGroup{{
			Name: str("web"), Count: &two,
			Constraints: []*api.Constraint{{LTarget: "${node.class}", RTarget: "worker", Operand: "="}, {Operand: "distinct_hosts", RTarget: "true"}},
			Networks:    []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}},
			Services: []*api.Service{{
				Name: "faults-taewa", PortLabel: "http", Provider: "consul",
				Checks: []api.ServiceCheck{{Name: "http", Type: "http", Path: "/?n=1", Interval: 2 * time.Second, Timeout: time.Second}},
			}},
			Tasks: []*api.Task{{
				Name: "taewa", Driver: "docker",
				Config:    map[string]any{"image": "orchbench/taewa:local", "network_mode": "host", "ports": []any{"http"}},
				Env:       map[string]string{"PORT": "${NOMAD_PORT_http}"},
				Resources: &api.Resources{CPU: &cpu, MemoryMB: &mem},
			}},
		}},
	}
}

// healthy waits for the deployment; Nomad's "cannot be placed" is asked
// again while a node that came back is not ready yet.
func healthy(t *testing.T, o orchestrator.Orchestrator, dep *orchestrator.Deployment) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		err := o.WaitHealthy(context.Background(), dep, time.Until(deadline))
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "cannot be placed") {
			t.Fatalf("the deployment is not healthy: %v", err)
		}
		time.Sleep(2 * time.Second)
	}
}

// faultStep runs a bounded load of length d from the client node over
// every instance and injects f into it as a step does; the record comes
// back with its load windows.
func faultStep(t *testing.T, r *Runner, o orchestrator.Orchestrator, dep *orchestrator.Deployment, client nodes.Node, f experiment.Fault, d time.Duration) results.FaultRecord {
	t.Helper()
	healthy(t, o, dep)
	eps, err := o.Endpoints(context.Background(), dep, "faults-taewa")
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, ep := range eps {
		hosts = append(hosts, ep.HostPort())
	}
	type loadOut struct {
		res *loadgen.Result
		err error
	}
	loaded := make(chan loadOut, 1)
	began := time.Now()
	go func() {
		res, err := loadFromClient(client, hosts, d)
		loaded <- loadOut{res, err}
	}()
	rec := results.FaultRecord{Kind: f.Kind, Service: "faults-taewa"}
	time.Sleep(f.After)
	r.injectNode(context.Background(), o, dep, f, &rec, began.Add(d))
	out := <-loaded
	if out.err != nil {
		t.Fatalf("load: %v", out.err)
	}
	rec.Seconds = rec.At.Sub(out.res.Start).Seconds()
	nodeFaultWindows(&rec, out.res)
	b, _ := json.MarshalIndent(rec, "", "  ")
	t.Logf("record of %s:\n%s", f.Kind, b)
	t.Logf("figure: %s: %s", f.Kind, rec.NodeRecovery())
	if rec.Error != "" {
		t.Fatalf("%s not injected: %s", f.Kind, rec.Error)
	}
	if rec.Node == nil || rec.FailureDetection["heartbeat_grace"] == "" {
		t.Errorf("the record lacks the node hit or Nomad's heartbeat settings: %+v / %v", rec.Node, rec.FailureDetection)
	}
	if len(rec.Windows) < 2 || rec.Windows[0].Requests == 0 {
		t.Errorf("no load before the fault: %+v", rec.Windows)
	}
	return rec
}

// loadFromClient runs orchbench's generator inside the client node, on its
// own dockerd and address, as a user of the cluster would load it.
func loadFromClient(client nodes.Node, hosts []string, d time.Duration) (*loadgen.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d+2*time.Minute)
	defer cancel()
	args := []string{"exec", client.Name, "docker", "run", "--rm", "--network", "host", "orchbench/orchbench:local",
		"load", "--allow-remote", "--json", "-t1", "-c4", "-R20", "--timeout", "1s", "-d", fmt.Sprintf("%.0fs", d.Seconds()),
		"--hosts", strings.Join(hosts, ","), "http://" + hosts[0] + "/?n=1"}
	out, err := exec.CommandContext(ctx, "docker", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("docker %s: %v", strings.Join(args, " "), err)
	}
	var res loadgen.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("the load's JSON: %v: %.300s", err, out)
	}
	return &res, nil
}

func mustRecover(t *testing.T, rec results.FaultRecord) {
	t.Helper()
	if rec.AllHealthySeconds == nil {
		t.Errorf("%s: no recovery measured: %s", rec.Kind, rec.AllHealthyNote)
	}
}

// mustHurt: a fault on a node that runs an instance the load reaches
// shows in the load's errors while it lasts.
func mustHurt(t *testing.T, rec results.FaultRecord) {
	t.Helper()
	if len(rec.Windows) < 2 || rec.Windows[1].Errors == 0 {
		t.Errorf("%s: no error counted during the fault: %+v", rec.Kind, rec.Windows)
	}
}

// checkShapeRefusal: the running shape passes, the other is refused with
// what was found and the command that brings the right one.
func checkShapeRefusal(t *testing.T, r *Runner, haOn bool) {
	t.Helper()
	right, wrong := experiment.HAOff, experiment.HAOn
	if haOn {
		right, wrong = wrong, right
	}
	step := func(ha string) []experiment.Step {
		return []experiment.Step{{ID: "shape-" + ha, Orchestrator: "nomad", HA: ha}}
	}
	if err := r.checkShapes(context.Background(), step(right)); err != nil {
		t.Errorf("ha = %q on its own shape refused: %v", right, err)
	}
	err := r.checkShapes(context.Background(), step(wrong))
	if err == nil || !strings.Contains(err.Error(), "just nodes-up nodes=4 servers=") || !strings.Contains(err.Error(), "on emulated cluster") {
		t.Errorf("ha = %q on the other shape: %v", wrong, err)
	} else {
		t.Logf("refused as it should be: %v", err)
	}
}

func fmtSec(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%.1f", *p)
}
