package sweep

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/hooks"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// cluster is the machines the sweep runs on: the single node unless told.
func (r *Runner) cluster() nodes.Controller {
	if r.Cluster == nil {
		return nodes.SingleNode{}
	}
	return r.Cluster
}

// watchPoll is how often recovery and leadership are looked at (tests
// shorten it).
var watchPoll = time.Second

// wholeBound bounds the wait for the deployment after a node's return
// (tests shorten it).
var wholeBound = 3 * time.Minute

// nodeFault is one node-level fault in progress: what the injection
// goroutine learns, up to the step's end.
type nodeFault struct {
	o     orchestrator.Orchestrator
	app   *orchestrator.Deployment
	ctl   nodes.Controller
	fault experiment.Fault
	rec   *results.FaultRecord
	// end is the step's end: nothing is waited for beyond it, except the
	// node's return, which later steps need.
	end time.Time
	// restored is when the node came back in the step, set once
	restored atomic.Pointer[time.Time]
	// registry is where the nodes pull the scheduling probe's image
	registry imageref.Registry
	// away learns the node the fault takes away, before it goes
	away *awayNodes
}

// restoredAt is when the node came back, nil while it is away.
func (nf *nodeFault) restoredAt() *time.Time { return nf.restored.Load() }

// injectNode injects a node-level fault and watches what follows until
// end: the leaders, a job submitted after a kill-leader, the node's return
// after its duration, and every instance running healthy again.
func (r *Runner) injectNode(ctx context.Context, o orchestrator.Orchestrator, app *orchestrator.Deployment, f experiment.Fault, rec *results.FaultRecord, end time.Time) {
	nf := &nodeFault{o: o, app: app, ctl: r.cluster(), fault: f, rec: rec, end: end, registry: r.Registry, away: &r.away}
	if err := nf.run(ctx); err != nil {
		rec.Error = err.Error()
	}
}

func (nf *nodeFault) run(ctx context.Context) error {
	rec := nf.rec
	if _, single := nf.ctl.(nodes.SingleNode); single {
		return fmt.Errorf("%s: %w", nf.fault.Kind, nodes.ErrSingleNode)
	}
	if fd, ok := nf.o.(orchestrator.FailureDetection); ok {
		if s, err := fd.FailureDetection(ctx); err == nil {
			rec.FailureDetection = s
		}
	}
	all, err := nf.ctl.Nodes(ctx)
	if err != nil {
		return err
	}
	before, err := nf.o.Instances(ctx, nf.app)
	if err != nil {
		return fmt.Errorf("the instances before the fault: %w", err)
	}
	target, chosen, planes, err := nf.target(ctx, all)
	if err != nil {
		return err
	}
	rec.Node = &results.NodeHit{Name: target.Name, Role: string(target.Role), Address: target.Address, Chosen: chosen}
	rec.HarnessEndpoint = harnessEndpointOn(target.Address, nf.o.Name(), os.Getenv)
	if rec.HarnessEndpoint == "" {
		rec.HarnessEndpoint = apiEndpointOn(target.Address, nf.o)
	}
	for _, in := range before {
		if in.Node == target.NameIn(nf.o.Name()) {
			rec.OnNode = append(rec.OnNode, orchestrator.FaultHit{Instance: in.ID, Group: in.Group})
		}
	}
	if len(rec.OnNode) > 0 {
		rec.Hit = rec.OnNode[0]
	}
	for _, cp := range planes {
		l := results.LeaderChange{ControlPlane: string(cp)}
		if n, err := nf.ctl.Leader(ctx, cp); err == nil {
			l.Before = n.Name
		}
		rec.Leaders = append(rec.Leaders, l)
	}

	if takesNodeAway(nf.fault.Kind) && nf.away != nil {
		nf.away.mark(target.Name)
		nf.away.mark(target.NameIn(nf.o.Name()))
	}
	rec.At = time.Now().UTC()
	var restored <-chan error
	switch nf.fault.Kind {
	case orchestrator.FaultKillNode, orchestrator.FaultKillLeader:
		err = nf.ctl.Kill(ctx, target.Name)
	case orchestrator.FaultPartitionNode:
		restored, err = nf.ctl.Partition(ctx, target.Name, nf.fault.Duration)
	case orchestrator.FaultRestartAgent:
		err = nf.ctl.RestartAgent(ctx, target.Name, nodes.Agent(nf.fault.Agent))
	default:
		err = fmt.Errorf("%s is not a node-level fault", nf.fault.Kind)
	}
	if err != nil {
		return err
	}

	var probe <-chan results.SchedulingProbe
	if nf.fault.Kind == orchestrator.FaultKillLeader {
		probe = nf.probeScheduling(ctx)
	}
	down := nf.fault.Kind.KillsNode()
	back := nf.restoreLater(ctx, target.Name, restored)
	leaders := nf.watchLeaders(ctx)
	nf.watchRecovery(ctx, target, len(before))
	rec.Leaders = <-leaders
	if probe != nil {
		p := <-probe
		rec.Scheduling = &p
	}
	err, came := <-back
	if at := nf.restoredAt(); at != nil {
		s := at.Sub(rec.At).Seconds()
		rec.RestoredSeconds = &s
	}
	if came || !down {
		// restored in the step (or the node never went down)
		if err != nil {
			rec.RestoreError = err.Error()
		}
		return nil
	}
	// a killed node with no duration comes back after the step (recovery
	// may have come sooner: the node stays down all the same); later
	// steps need the cluster whole
	revive := context.WithoutCancel(ctx)
	cancelled := false
	if wait := time.Until(nf.end); wait > 0 && sleepCtx(ctx, wait) != nil {
		// interrupted: whatever runs next on this cluster needs it whole,
		// so the node comes back all the same (bounded), as a partition heals
		var cancel context.CancelFunc
		revive, cancel = context.WithTimeout(revive, reviveOnCancel)
		defer cancel()
		cancelled = true
	}
	if err := nf.ctl.Revive(revive, target.Name); err != nil {
		rec.RestoreError = "after the step: " + err.Error()
		if cancelled {
			rec.RestoreError = fmt.Sprintf("the step was cancelled and node %s could not be started again: %v (start it: just nodes-revive %s)", target.Name, err, target.Name)
		}
		return nil
	}
	s := time.Since(rec.At).Seconds()
	rec.RestoredSeconds = &s
	if cancelled {
		rec.RestoreError = "the step was cancelled; node " + target.Name + " was started again"
		return nil
	}
	if len(planes) > 0 {
		// the next step submits jobs: a revived sole server must lead again first
		nf.waitLeader(context.WithoutCancel(ctx), planes[0], time.Minute)
	}
	nf.waitWhole(context.WithoutCancel(ctx), len(before), wholeBound)
	return nil
}

// waitWhole waits, bounded, until the deployment is whole again after the
// node's return, so that the next step does not start on what is left of
// it; a deployment still short is noted, and the next step's own health
// check decides.
func (nf *nodeFault) waitWhole(ctx context.Context, want int, bound time.Duration) {
	deadline := time.Now().Add(bound)
	why := ""
	for time.Now().Before(deadline) {
		ok, w := nf.allHealthy(ctx, "", false, want)
		if ok {
			return
		}
		why = w
		if sleepCtx(ctx, watchPoll) != nil {
			return
		}
	}
	nf.rec.RestoreError = fmt.Sprintf("the deployment was not whole %s after the node's return: %s", bound, why)
}

// waitLeader waits, bounded, until the control plane has a leader.
func (nf *nodeFault) waitLeader(ctx context.Context, cp nodes.ControlPlane, bound time.Duration) {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if _, err := nf.ctl.Leader(ctx, cp); err == nil {
			return
		}
		if sleepCtx(ctx, watchPoll) != nil {
			return
		}
	}
	nf.rec.RestoreError = fmt.Sprintf("%s had no leader %s after the node's return", cp, bound)
}

// target picks the node: the leader's for kill-leader, the one the spec
// names, or a worker that runs an instance of the fault's service. planes
// are the control planes whose leaders the record follows.
func (nf *nodeFault) target(ctx context.Context, all []nodes.Node) (nodes.Node, string, []nodes.ControlPlane, error) {
	orch := nf.o.Name()
	if nf.fault.Kind == orchestrator.FaultKillLeader {
		planes, err := leaderPlanes(orch)
		if err != nil {
			return nodes.Node{}, "", nil, err
		}
		n, err := nf.ctl.Leader(ctx, planes[0])
		if err != nil {
			return nodes.Node{}, "", nil, fmt.Errorf("kill-leader: %w", err)
		}
		return n, fmt.Sprintf("holds the %s leadership", planes[0]), planes, nil
	}
	if nf.fault.Node != "" {
		n, ok := nodes.ByName(all, nf.fault.Node)
		if !ok {
			return nodes.Node{}, "", nil, fmt.Errorf("node %q is not a node of %s", nf.fault.Node, nf.ctl.Describe())
		}
		return n, "named in the spec", nil, nil
	}
	eps, err := nf.o.Endpoints(ctx, nf.app, nf.rec.Service)
	if err != nil {
		return nodes.Node{}, "", nil, fmt.Errorf("the node running %s: %w", nf.rec.Service, err)
	}
	// The measured entry is held to its worker (placement): a fault there
	// takes the entry itself, which has nowhere to go, so a worker without
	// it is preferred, as study 002 kept its front end's machine up.
	entryNodes := map[string]bool{}
	if entry := nf.app.App.Service; entry != "" && entry != nf.rec.Service {
		if eeps, err := nf.o.Endpoints(ctx, nf.app, entry); err == nil {
			for _, ep := range eeps {
				entryNodes[ep.Node] = true
			}
		}
	}
	var first *nodes.Node
	for _, ep := range eps {
		for _, n := range nodes.WithRole(all, nodes.RoleWorker) {
			if !n.Running || ep.Node == "" || n.NameIn(orch) != ep.Node {
				continue
			}
			if !entryNodes[ep.Node] {
				return n, "runs an instance of " + nf.rec.Service, nil, nil
			}
			if first == nil {
				first = &n
			}
		}
	}
	if first != nil {
		return *first, "runs an instance of " + nf.rec.Service + " (every such worker also runs the measured " + nf.app.App.Service + ")", nil, nil
	}
	return nodes.Node{}, "", nil, fmt.Errorf("no worker of %s runs an instance of %s (its endpoints name nodes %v); name one with node = ...", nf.ctl.Describe(), nf.rec.Service, endpointNodes(eps))
}

func endpointNodes(eps []orchestrator.Endpoint) []string {
	var out []string
	for _, ep := range eps {
		out = append(out, ep.Node)
	}
	return out
}

// leaderPlanes are the leaderships kill-leader follows for an orchestrator,
// the one it kills first. Nomad's services register in Consul, so its
// leader is followed too; it is not killed when it sits on another node,
// since with 3 servers losing 2 loses the quorum, a different fault.
func leaderPlanes(orch string) ([]nodes.ControlPlane, error) {
	switch orch {
	case "nomad":
		return []nodes.ControlPlane{nodes.PlaneNomad, nodes.PlaneConsul}, nil
	case "swarm":
		return []nodes.ControlPlane{nodes.PlaneSwarm}, nil
	case "kubernetes":
		// etcd's leader is killed: without it nothing is written. The
		// controller manager's lease is followed, since it is the one
		// that notices a lost node and replaces its pods.
		return []nodes.ControlPlane{nodes.PlaneEtcd, nodes.PlaneKubeControllerManager}, nil
	}
	return nil, fmt.Errorf("kill-leader: no leadership is known for orchestrator %q", orch)
}

// reviveOnCancel bounds starting a killed node again when its step is
// cancelled (an interrupted sweep): a node's container, dockerd and agents
// took 25-47 s on this machine.
const reviveOnCancel = 2 * time.Minute

// restoreLater brings the node back when the fault's time is up: a
// partition heals itself (restored), a killed node with a duration is
// revived. The channel closes without a value when nothing comes back in
// the step.
func (nf *nodeFault) restoreLater(ctx context.Context, node string, restored <-chan error) <-chan error {
	out := make(chan error, 1)
	at := func() { now := time.Now(); nf.restored.Store(&now) }
	switch {
	case restored != nil:
		go func() {
			defer close(out)
			err := <-restored
			at()
			out <- err
		}()
	case nf.fault.Kind.KillsNode() && nf.fault.Duration > 0:
		go func() {
			defer close(out)
			select {
			case <-time.After(nf.fault.Duration):
			case <-ctx.Done():
				return
			}
			// once begun, a revival is finished even if the step is cancelled
			revive, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviveOnCancel)
			err := nf.ctl.Revive(revive, node)
			cancel()
			at()
			out <- err
		}()
	default:
		close(out)
	}
	return out
}

// datasetAfterFault runs the app's verification once the node fault's step
// is over: whether writes made before the fault survived it. Nil when the
// app declares none. The next step's own verification (it runs after any
// replacement) still decides whether that step may measure.
func (r *Runner) datasetAfterFault(ctx context.Context, dep *deployment) *results.DatasetAfter {
	app := dep.app.App
	if app.Verify.Args == nil {
		return nil
	}
	eps, err := dep.orch.Endpoints(ctx, dep.app, app.Service)
	if err != nil {
		return &results.DatasetAfter{Detail: "no endpoint to verify through: " + err.Error()}
	}
	var took float64
	res, err := r.runHook(ctx, hooks.At(hooks.Verify, dep.app.Job, app.Verify, eps[0]), &took)
	if err != nil {
		return &results.DatasetAfter{Detail: err.Error()}
	}
	return &results.DatasetAfter{Passed: true, Detail: fmt.Sprintf("verification passed in %.1f s: %s", took, res.Last)}
}

// harnessEndpointOn names the address through which the harness reaches
// orchestrator (Nomad: NOMAD_ADDR, CONSUL_HTTP_ADDR) when it points at
// addr, the node a fault takes, or "": a kill-leader that hits it cuts the
// harness off, which must not read as the cluster's loss of scheduling.
// Swarm says it itself (apiEndpointOn): it fails over to another manager
// when it has one.
func harnessEndpointOn(addr, orchestrator string, getenv func(string) string) string {
	keys := map[string][]string{"nomad": {"NOMAD_ADDR", "CONSUL_HTTP_ADDR"}}[orchestrator]
	if addr == "" {
		return ""
	}
	for _, key := range keys {
		if v := getenv(key); namesHost(v, addr) {
			return key + "=" + v
		}
	}
	return ""
}

// namesHost reports whether the URL v is set and names the host addr.
func namesHost(v, addr string) bool {
	u, err := url.Parse(v)
	return v != "" && err == nil && u.Hostname() == addr
}

// apiEndpointOn is harnessEndpointOn for an adapter that names its API
// address itself (orchestrator.APIEndpoint): with one Kubernetes server,
// the kubeconfig points at it, and with one Swarm manager DOCKER_HOST
// does; a kill-leader there takes the harness's API with the cluster's.
func apiEndpointOn(addr string, o any) string {
	ae, ok := o.(orchestrator.APIEndpoint)
	if !ok || addr == "" {
		return ""
	}
	if setting, v := ae.APIEndpoint(); namesHost(v, addr) {
		return setting + "=" + v
	}
	return ""
}
