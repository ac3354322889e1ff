package sweep

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// fakeMachines is a cluster of named machines whose faults are only noted.
type fakeMachines struct {
	mu      sync.Mutex
	all     []nodes.Node
	leader  string
	killed  []string
	revived []string
	// onKill runs as a node dies (the fake orchestrator's view changes)
	onKill, onRevive func(node string)
}

func (f *fakeMachines) Describe() string { return "fake cluster" }
func (f *fakeMachines) Nodes(context.Context) ([]nodes.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]nodes.Node(nil), f.all...), nil
}
func (f *fakeMachines) set(name string, running bool) {
	for i := range f.all {
		if f.all[i].Name == name {
			f.all[i].Running = running
		}
	}
}
func (f *fakeMachines) Kill(_ context.Context, n string) error {
	f.mu.Lock()
	f.killed = append(f.killed, n)
	f.set(n, false)
	if n == f.leader {
		f.leader = ""
	}
	cb := f.onKill
	f.mu.Unlock()
	if cb != nil {
		cb(n)
	}
	return nil
}
func (f *fakeMachines) Revive(_ context.Context, n string) error {
	f.mu.Lock()
	f.revived = append(f.revived, n)
	f.set(n, true)
	if f.leader == "" {
		f.leader = n
	}
	cb := f.onRevive
	f.mu.Unlock()
	if cb != nil {
		cb(n)
	}
	return nil
}
func (f *fakeMachines) Partition(context.Context, string, time.Duration) (<-chan error, error) {
	return nil, errors.New("not in this fake")
}
func (f *fakeMachines) RestartAgent(context.Context, string, nodes.Agent) error { return nil }
func (f *fakeMachines) Leader(_ context.Context, cp nodes.ControlPlane) (nodes.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.leader == "" {
		return nodes.Node{}, nodes.ErrNoLeader
	}
	n, _ := nodes.ByName(f.all, f.leader)
	return n, nil
}

// fakeOrch lists instances by node; what it schedules is up to the test.
type fakeOrch struct {
	orchestrator.Orchestrator
	mu        sync.Mutex
	instances []orchestrator.Instance
	// accepting is false while no server can take a job
	accepting bool
	deployed  int
	// images are the first task's image of every job deployed
	images []string
	// frontOn are the nodes of the measured entry, service "front"
	frontOn []string
	// unplaced is what the health wait says it cannot place, "" for nothing
	unplaced string
}

func (o *fakeOrch) Name() string { return "nomad" }
func (o *fakeOrch) Instances(context.Context, *orchestrator.Deployment) ([]orchestrator.Instance, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]orchestrator.Instance(nil), o.instances...), nil
}
func (o *fakeOrch) Endpoints(_ context.Context, _ *orchestrator.Deployment, service string) ([]orchestrator.Endpoint, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if service == "front" {
		var eps []orchestrator.Endpoint
		for _, n := range o.frontOn {
			eps = append(eps, orchestrator.Endpoint{Service: "front", Instance: "front-" + n, Node: n})
		}
		return eps, nil
	}
	var eps []orchestrator.Endpoint
	for _, in := range o.instances {
		eps = append(eps, orchestrator.Endpoint{Service: "web", Instance: in.ID, Node: in.Node})
	}
	return eps, nil
}
func (o *fakeOrch) WaitHealthy(context.Context, *orchestrator.Deployment, time.Duration) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.unplaced != "" {
		return errors.New("cannot be placed: " + o.unplaced)
	}
	return nil
}
func (o *fakeOrch) Deploy(_ context.Context, w orchestrator.Workload) (*orchestrator.Deployment, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.accepting {
		return nil, errors.New("no cluster leader")
	}
	o.deployed++
	if img, ok := w.Job.TaskGroups[0].Tasks[0].Config["image"].(string); ok {
		o.images = append(o.images, img)
	}
	return &orchestrator.Deployment{Job: *w.Job.ID}, nil
}
func (o *fakeOrch) Stop(context.Context, *orchestrator.Deployment) error { return nil }
func (o *fakeOrch) move(from, to string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range o.instances {
		if o.instances[i].Node == from {
			o.instances[i].Node, o.instances[i].ID = to, o.instances[i].ID+"-new"
		}
	}
}
func (o *fakeOrch) drop(node string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keep []orchestrator.Instance
	for _, in := range o.instances {
		if in.Node != node {
			keep = append(keep, in)
		}
	}
	o.instances = keep
}

func fakeShape(workers int) *fakeMachines {
	f := &fakeMachines{leader: "s1", all: []nodes.Node{{Name: "s1", Role: nodes.RoleServer, Address: "10.0.0.11", Running: true}}}
	for i := 1; i <= workers; i++ {
		n := string(rune('0' + i))
		f.all = append(f.all, nodes.Node{Name: "w" + n, Role: nodes.RoleWorker, Address: "10.0.0.2" + n, Running: true})
	}
	return f
}

func twoInstances() *fakeOrch {
	return &fakeOrch{accepting: true, instances: []orchestrator.Instance{
		{ID: "a", Group: "web", Task: "taewa", Node: "w1"}, {ID: "b", Group: "web", Task: "taewa", Node: "w2"},
	}}
}

func runFake(t *testing.T, m *fakeMachines, o *fakeOrch, f experiment.Fault, window time.Duration) results.FaultRecord {
	t.Helper()
	oldPoll, oldWhole := watchPoll, wholeBound
	watchPoll, wholeBound = 5*time.Millisecond, 100*time.Millisecond
	t.Cleanup(func() { watchPoll, wholeBound = oldPoll, oldWhole })
	r := &Runner{Cluster: m}
	rec := results.FaultRecord{Kind: f.Kind, Service: "web"}
	r.injectNode(context.Background(), o, &orchestrator.Deployment{Job: "web"}, f, &rec, time.Now().Add(window))
	return rec
}

// A killed worker whose instance the orchestrator moves: recovery is when
// the moved instance runs, the node comes back after the step, and the
// instance on it is the fault's.
func TestKillNodeRecoversWhenTheInstanceMoves(t *testing.T) {
	m, o := fakeShape(3), twoInstances()
	m.onKill = func(n string) {
		time.AfterFunc(50*time.Millisecond, func() { o.move(n, "w3") })
	}
	rec := runFake(t, m, o, experiment.Fault{Kind: orchestrator.FaultKillNode}, 2*time.Second)
	if rec.Error != "" {
		t.Fatal(rec.Error)
	}
	if rec.Node == nil || rec.Node.Name != "w1" || rec.Node.Role != "worker" || !strings.Contains(rec.Node.Chosen, "runs an instance of web") {
		t.Errorf("node hit %+v, want w1, the first worker running web", rec.Node)
	}
	if len(rec.OnNode) != 1 || rec.OnNode[0].Instance != "a" || rec.Hit.Instance != "a" {
		t.Errorf("instances on the node %+v, hit %+v", rec.OnNode, rec.Hit)
	}
	if rec.AllHealthySeconds == nil || *rec.AllHealthySeconds < 0.05 || *rec.AllHealthySeconds > 1 {
		t.Errorf("recovery %v, want about 0.05 s (%s)", fmtSecs(rec.AllHealthySeconds), rec.AllHealthyNote)
	}
	if len(m.revived) != 1 || m.revived[0] != "w1" || rec.RestoredSeconds == nil {
		t.Errorf("the node was not brought back after the step: revived %v, %s", m.revived, rec.RestoreError)
	}
}

// An interrupted sweep (its context cancelled while a worker is down)
// still starts the node again, and says so, with and without a duration:
// a cluster left a node short spoils whatever runs on it next.
func TestKillNodeCancelledStillRevivesTheNode(t *testing.T) {
	for _, down := range []time.Duration{0, time.Hour} {
		m, o := fakeShape(3), twoInstances()
		oldPoll, oldWhole := watchPoll, wholeBound
		watchPoll, wholeBound = 5*time.Millisecond, 100*time.Millisecond
		ctx, cancel := context.WithCancel(context.Background())
		m.onKill = func(string) { time.AfterFunc(50*time.Millisecond, cancel) }
		r := &Runner{Cluster: m}
		rec := results.FaultRecord{Kind: orchestrator.FaultKillNode, Service: "web"}
		began := time.Now()
		r.injectNode(ctx, o, &orchestrator.Deployment{Job: "web"}, experiment.Fault{Kind: orchestrator.FaultKillNode, Duration: down}, &rec, time.Now().Add(time.Hour))
		watchPoll, wholeBound = oldPoll, oldWhole
		if time.Since(began) > 10*time.Second {
			t.Errorf("duration %s: the cancelled step waited %s", down, time.Since(began))
		}
		if len(m.revived) != 1 || m.revived[0] != "w1" || rec.RestoredSeconds == nil {
			t.Errorf("duration %s: the node was left down after the cancel: revived %v, %s", down, m.revived, rec.RestoreError)
		}
		if down == 0 && !strings.Contains(rec.RestoreError, "the step was cancelled; node w1 was started again") {
			t.Errorf("duration %s: the record says %q", down, rec.RestoreError)
		}
	}
}

// A worker running an instance of the service is hit, but not the one
// holding the measured entry (held to its worker, it has nowhere to go)
// while another runs an instance too; when every one holds the entry, the
// first is hit and the record says so.
func TestKillNodeSparesTheEntrysWorker(t *testing.T) {
	for _, c := range []struct {
		frontOn []string
		want    string
		chosen  string
	}{
		{[]string{"w1"}, "w2", "runs an instance of web"},
		{[]string{"w1", "w2"}, "w1", "runs an instance of web (every such worker also runs the measured front)"},
	} {
		m, o := fakeShape(3), twoInstances()
		o.frontOn = c.frontOn
		m.onKill = func(n string) { time.AfterFunc(20*time.Millisecond, func() { o.move(n, "w3") }) }
		oldPoll, oldWhole := watchPoll, wholeBound
		watchPoll, wholeBound = 5*time.Millisecond, 100*time.Millisecond
		r := &Runner{Cluster: m}
		rec := results.FaultRecord{Kind: orchestrator.FaultKillNode, Service: "web"}
		dep := &orchestrator.Deployment{Job: "web"}
		dep.App.Service = "front"
		r.injectNode(context.Background(), o, dep, experiment.Fault{Kind: orchestrator.FaultKillNode}, &rec, time.Now().Add(time.Second))
		watchPoll, wholeBound = oldPoll, oldWhole
		if rec.Node == nil || rec.Node.Name != c.want || rec.Node.Chosen != c.chosen {
			t.Errorf("entry on %v: hit %+v, want %s (%s)", c.frontOn, rec.Node, c.want, c.chosen)
		}
	}
}

// The deliberately wrong setup: nowhere to move the instance. Recovery is
// missing, with the reason, and not the first look's "all healthy".
func TestKillNodeWithNoRoomIsNotRecovered(t *testing.T) {
	m, o := fakeShape(2), twoInstances()
	// the orchestrator notices the loss only later, as Nomad does after the
	// node's heartbeat expires; the instance then has nowhere to go
	m.onKill = func(n string) { time.AfterFunc(50*time.Millisecond, func() { o.drop(n) }) }
	// and the scheduler says why, which the note must carry
	o.unplaced = "group web: 1 unplaced (memory exhausted on 1 node(s))"
	rec := runFake(t, m, o, experiment.Fault{Kind: orchestrator.FaultKillNode}, 300*time.Millisecond)
	if rec.AllHealthySeconds != nil {
		t.Fatalf("recovery %.2f s reported where no instance could move", *rec.AllHealthySeconds)
	}
	if want := "1 of 2 instances running; cannot be placed: " + o.unplaced; rec.AllHealthyNote != want {
		t.Errorf("note %q, want %q", rec.AllHealthyNote, want)
	}
	if !strings.Contains(rec.NodeRecovery(), "not recovered before the step ended: 1 of 2 instances running") {
		t.Errorf("reads %q", rec.NodeRecovery())
	}
	if !strings.Contains(rec.RestoreError, "the deployment was not whole") {
		t.Errorf("a deployment still short after the node's return must be noted: %q", rec.RestoreError)
	}
}

// An instance the orchestrator still lists on the dead node is not healthy:
// the step ends with it listed, so no recovery.
func TestAnInstanceListedOnADeadNodeIsNotRecovery(t *testing.T) {
	m, o := fakeShape(3), twoInstances()
	rec := runFake(t, m, o, experiment.Fault{Kind: orchestrator.FaultKillNode}, 200*time.Millisecond)
	if rec.AllHealthySeconds != nil || !strings.Contains(rec.AllHealthyNote, "still listed on w1, which is away") {
		t.Errorf("recovery %v, note %q", fmtSecs(rec.AllHealthySeconds), rec.AllHealthyNote)
	}
}

// HA off: the sole server dies; nothing is accepted until it returns, and
// the record says how long scheduling was unavailable.
func TestKillLeaderWithOneServerStopsScheduling(t *testing.T) {
	m, o := fakeShape(2), twoInstances()
	m.onKill = func(string) { o.mu.Lock(); o.accepting = false; o.mu.Unlock() }
	m.onRevive = func(string) { o.mu.Lock(); o.accepting = true; o.mu.Unlock() }
	rec := runFake(t, m, o, experiment.Fault{Kind: orchestrator.FaultKillLeader, Duration: 150 * time.Millisecond}, time.Second)
	if rec.Error != "" {
		t.Fatal(rec.Error)
	}
	if rec.Node.Name != "s1" || rec.Node.Chosen != "holds the nomad leadership" {
		t.Errorf("hit %+v", rec.Node)
	}
	s := rec.Scheduling
	if s == nil || s.PlacedSeconds == nil || *s.PlacedSeconds < 0.15 || s.Attempts == 0 {
		t.Fatalf("scheduling %+v: the probe must wait for the server's return", s)
	}
	if !strings.HasPrefix(s.String(), "scheduling unavailable for") {
		t.Errorf("reads %q", s)
	}
	l := rec.Leaders[0]
	if l.ControlPlane != "nomad" || l.Before != "s1" || l.After != "s1" || l.AfterSeconds == nil || *l.AfterSeconds < 0.15 {
		t.Errorf("leader %+v: s1 must lead again only once back", l)
	}
	if rec.Leaders[1].ControlPlane != "consul" {
		t.Errorf("consul's leadership is not followed: %+v", rec.Leaders)
	}
}

// HA on: another server leads at once and the probe is placed at once.
func TestKillLeaderWithThreeServersKeepsScheduling(t *testing.T) {
	m, o := fakeShape(2), twoInstances()
	m.all = append(m.all, nodes.Node{Name: "s2", Role: nodes.RoleServer, Running: true}, nodes.Node{Name: "s3", Role: nodes.RoleServer, Running: true})
	m.onKill = func(string) {
		time.AfterFunc(20*time.Millisecond, func() { m.mu.Lock(); m.leader = "s2"; m.mu.Unlock() })
	}
	rec := runFake(t, m, o, experiment.Fault{Kind: orchestrator.FaultKillLeader}, 500*time.Millisecond)
	if !rec.Leaders[0].Changed() || rec.Leaders[0].After != "s2" {
		t.Errorf("leader %+v, want s1 → s2", rec.Leaders[0])
	}
	if s := rec.Scheduling; s == nil || s.PlacedSeconds == nil || s.Attempts != 0 || !strings.HasPrefix(s.String(), "job orchbench-scheduling-probe, submitted after the fault, placed") {
		t.Errorf("scheduling %+v", s)
	}
}

func TestKillLeaderOnKubernetesKillsEtcdsLeader(t *testing.T) {
	planes, err := leaderPlanes("kubernetes")
	if err != nil || len(planes) != 2 || planes[0] != nodes.PlaneEtcd || planes[1] != nodes.PlaneKubeControllerManager {
		t.Errorf("planes %v, %v; want etcd (killed), then kube-controller-manager (followed)", planes, err)
	}
	if _, err := leaderPlanes("mesos"); err == nil {
		t.Error("an unknown orchestrator's leadership was accepted")
	}
}

func TestNodeFaultsAreRefusedOnTheSingleNode(t *testing.T) {
	r := &Runner{}
	rec := results.FaultRecord{Kind: orchestrator.FaultKillNode, Service: "web"}
	r.injectNode(context.Background(), twoInstances(), &orchestrator.Deployment{}, experiment.Fault{Kind: orchestrator.FaultKillNode, Node: "w1"}, &rec, time.Now())
	if !strings.HasPrefix(rec.Error, "kill-node: the embedded single-node cluster has one node") {
		t.Errorf("error %q", rec.Error)
	}
}

func TestNamedNodeMustBeOne(t *testing.T) {
	rec := runFake(t, fakeShape(2), twoInstances(), experiment.Fault{Kind: orchestrator.FaultKillNode, Node: "w9"}, 50*time.Millisecond)
	if !strings.Contains(rec.Error, `node "w9" is not a node of fake cluster`) {
		t.Errorf("error %q", rec.Error)
	}
}

func TestFaultWindowsSplitTheSeries(t *testing.T) {
	var series []loadgen.SeriesPoint
	series = append(series, loadgen.SeriesPoint{T: -1, Seconds: 1, Warmup: true, AchievedRate: 10, Errors: 7})
	for i := 0; i < 10; i++ {
		p := loadgen.SeriesPoint{T: float64(i), Seconds: 1, AchievedRate: 10}
		if i >= 3 && i < 6 {
			p.Errors = 2
		}
		series = append(series, p)
	}
	rec := 3.0
	ws := faultWindows(series, 2.5, &rec)
	want := []results.FaultWindow{
		{Name: "before", FromSeconds: 0, ToSeconds: 2.5, Requests: 30},
		{Name: "during", FromSeconds: 2.5, ToSeconds: 5.5, Requests: 30, Errors: 6},
		{Name: "after", FromSeconds: 5.5, ToSeconds: 10, Requests: 40},
	}
	if len(ws) != 3 {
		t.Fatalf("%+v", ws)
	}
	for i := range want {
		if ws[i] != want[i] {
			t.Errorf("window %d: %+v, want %+v", i, ws[i], want[i])
		}
	}
	// not recovered: the fault lasts to the end, no after
	ws = faultWindows(series, 2.5, nil)
	if len(ws) != 2 || ws[1].ToSeconds != 10 || ws[1].Requests != 70 || ws[1].Errors != 6 {
		t.Errorf("unrecovered: %+v", ws)
	}
}

func TestShapeMismatchSaysWhatRunsAndWhatToRun(t *testing.T) {
	st := experiment.Step{ID: "s1", Orchestrator: "nomad", HA: experiment.HAOn}
	if err := shapeMismatch(st, 3, fakeShape(3)); err != nil {
		t.Errorf("3 servers for ha on: %v", err)
	}
	err := shapeMismatch(st, 1, fakeShape(3))
	if err == nil || !strings.Contains(err.Error(), "nomad runs 1 server on fake cluster") || !strings.Contains(err.Error(), "just nodes-up nodes=4 servers=3") {
		t.Errorf("%v", err)
	}
	err = shapeMismatch(st, 1, nodes.SingleNode{})
	if err == nil || !strings.Contains(err.Error(), `which is ha = "off"`) || !strings.Contains(err.Error(), "NODES_NAME") {
		t.Errorf("%v", err)
	}
	st.HA = experiment.HAOff
	if err := shapeMismatch(st, 1, nodes.SingleNode{}); err != nil {
		t.Errorf("the single node is ha off: %v", err)
	}
	if err := shapeMismatch(st, 3, fakeShape(3)); err == nil || !strings.Contains(err.Error(), "servers=1") {
		t.Errorf("ha off on 3 servers: %v", err)
	}
}

func fmtSecs(p *float64) string {
	if p == nil {
		return "none"
	}
	return time.Duration(*p * float64(time.Second)).String()
}

// A node fault's progress line reads its node record, not the instance
// kinds' "no task of <group> started again", which it has no group for.
func TestStepLineReadsANodeFaultsRecord(t *testing.T) {
	healthy := 31.2
	sr := results.StepResult{Outcome: results.OutcomeValid, Metadata: map[string]any{"fault": results.FaultRecord{
		Kind: orchestrator.FaultKillNode, Node: &results.NodeHit{Name: "w2", Role: "worker", Chosen: "runs an instance of web"}, AllHealthySeconds: &healthy}}}
	line := stepLine(sr)
	if !strings.Contains(line, "kill-node w2 (worker, runs an instance of web); every instance healthy again on the remaining nodes after 31.2 s") || strings.Contains(line, "no task of") {
		t.Errorf("reads %q", line)
	}
}

// The scheduling probe's image comes from the registry the nodes pull the
// app from: on the nodes, the bare local name is on no worker, and a probe
// accepted but never placed read as scheduling unavailable with HA on.
func TestSchedulingProbeIsPulledFromTheSweepsRegistry(t *testing.T) {
	oldPoll := watchPoll
	watchPoll = 5 * time.Millisecond
	t.Cleanup(func() { watchPoll = oldPoll })
	m, o := fakeShape(2), twoInstances()
	r := &Runner{Cluster: m, Registry: "10.0.0.10:5000"}
	rec := results.FaultRecord{Kind: orchestrator.FaultKillLeader, Service: "web"}
	r.injectNode(context.Background(), o, &orchestrator.Deployment{Job: "web"}, experiment.Fault{Kind: orchestrator.FaultKillLeader}, &rec, time.Now().Add(300*time.Millisecond))
	if len(o.images) != 1 || o.images[0] != "10.0.0.10:5000/orchbench/pause:local" {
		t.Errorf("the probe job ran %v, want the registry's pause image", o.images)
	}
}

// The harness's own API address on the node a fault takes is named, so a
// probe refused because the harness lost its manager is not read as the
// cluster's loss of scheduling; another node's fault names nothing.
func TestHarnessEndpointOnTheNodeHitIsNamed(t *testing.T) {
	env := map[string]string{"DOCKER_HOST": "tcp://10.83.0.11:2375", "NOMAD_ADDR": "http://10.83.0.10:4646"}
	get := func(k string) string { return env[k] }
	// Swarm names its manager itself, only when it cannot fail over
	// (swarm.Orchestrator.APIEndpoint, read through apiEndpointOn)
	if got := harnessEndpointOn("10.83.0.11", "swarm", get); got != "" {
		t.Errorf("a Swarm step read DOCKER_HOST from the environment: %q", got)
	}
	// a Nomad step reaches Nomad through the client node: DOCKER_HOST is not its
	if got := harnessEndpointOn("10.83.0.11", "nomad", get); got != "" {
		t.Errorf("a Nomad step with DOCKER_HOST on the node: %q", got)
	}
	env["NOMAD_ADDR"] = "http://10.83.0.11:4646"
	if got := harnessEndpointOn("10.83.0.11", "nomad", get); got != "NOMAD_ADDR=http://10.83.0.11:4646" {
		t.Errorf("NOMAD_ADDR at the server hit: %q", got)
	}
	f := results.FaultRecord{Kind: orchestrator.FaultKillLeader, Node: &results.NodeHit{Name: "s1"}, HarnessEndpoint: "DOCKER_HOST=tcp://10.83.0.11:2375"}
	if !strings.Contains(f.NodeRecovery(), "the harness's own DOCKER_HOST=tcp://10.83.0.11:2375 was on the node hit") {
		t.Errorf("reads %q", f.NodeRecovery())
	}
}

type kubeconfigAt string

func (k kubeconfigAt) APIEndpoint() (string, string) { return "ORCHBENCH_KUBECONFIG server", string(k) }

// An adapter that names its API address (a kubeconfig's server) has it
// named when the node hit holds it, and only then.
func TestAPIEndpointOnTheNodeHitIsNamed(t *testing.T) {
	one := kubeconfigAt("https://10.82.0.11:6443")
	if got := apiEndpointOn("10.82.0.11", one); got != "ORCHBENCH_KUBECONFIG server=https://10.82.0.11:6443" {
		t.Errorf("the one API server hit: %q", got)
	}
	if got := apiEndpointOn("10.82.0.12", one); got != "" {
		t.Errorf("another server hit: %q", got)
	}
	if got := apiEndpointOn("10.82.0.11", struct{}{}); got != "" {
		t.Errorf("an adapter that names none: %q", got)
	}
}
