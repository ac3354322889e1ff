package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// ShippingAgent is the node's log and metrics shipper as the sweep uses it
// (nomad.NodeAgent on the embedded cluster).
type ShippingAgent interface {
	Name() string
	// Tasks are the agent's running tasks, with their nodes and cgroups.
	Tasks(ctx context.Context) ([]orchestrator.Limits, error)
	Pause(ctx context.Context) error
	Resume(ctx context.Context, bound time.Duration) error
}

// AgentBinaries are the executables of every shipper orchbench deploys
// (jobs/agent.nomad.tpl, jobs/vector.nomad.tpl); any of them running on the
// node is shipping, whoever started it.
var AgentBinaries = []string{"otelcol-orchbench", "vector"}

// agentProcesses lists the agent binaries running on nodes as "name (pid
// N)", with " on node X" when it looks at more than one, read from each
// node's process table so no agent escapes by not being a Nomad task. An
// unreadable process table is an error, not a node without agents.
func agentProcesses(ctx context.Context, nodes []nodeprobe.Node, away *awayNodes) ([]string, error) {
	var out []string
	for _, n := range nodes {
		exes, err := n.Executables(ctx)
		if err != nil && away.has(n.Name()) {
			// the step's own fault took it away: no agent runs there unseen
			// by the orchestrator either, and the fault's record says so
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range exes {
			name := filepath.Base(e.Path)
			if !slices.Contains(AgentBinaries, name) {
				continue
			}
			p := fmt.Sprintf("%s (pid %d)", name, e.PID)
			if len(nodes) > 1 {
				p += " on node " + n.Name()
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// watchedNodes are the hosts the step's tasks and the agent's run on, each
// once; the one the resolver gives for "" when no task names one.
func watchedNodes(nodes nodeprobe.Resolver, tasks ...[]orchestrator.Limits) []nodeprobe.Node {
	names := []string{}
	for _, ts := range tasks {
		for _, t := range ts {
			names = append(names, t.Node)
		}
	}
	if len(names) == 0 {
		names = []string{""}
	}
	slices.Sort(names)
	return nodes.Machines(names)
}

// processWatch looks for agent processes once every interval while a load
// runs: a shipper started and stopped between the load's start and end is
// as much a busier node as one running throughout.
type processWatch struct {
	list func() ([]string, error)
	// seen, looks and err are written by the watching goroutine only, and
	// read by finish after it has ended.
	seen  []string
	looks int
	err   error
	stop  chan struct{}
	done  chan struct{}
}

func startProcessWatch(list func() ([]string, error), every time.Duration) *processWatch {
	w := &processWatch{list: list, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			w.look()
			select {
			case <-w.stop:
				w.look()
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *processWatch) look() {
	procs, err := w.list()
	if err != nil {
		w.err = err
		return
	}
	w.looks++
	for _, p := range procs {
		if !slices.Contains(w.seen, p) {
			w.seen = append(w.seen, p)
		}
	}
}

// finish stops the watch and returns every agent process seen, how many
// looks succeeded, and the last error of one that failed.
func (w *processWatch) finish() (seen []string, looks int, err error) {
	close(w.stop)
	<-w.done
	return w.seen, w.looks, w.err
}

// resumeBound bounds how long the agent may take to run again.
const resumeBound = 60 * time.Second

// settleBound bounds the wait for a resumed agent to finish shipping what
// the node logged while it was stopped; that catch-up is not the next
// step's cost.
const settleBound = 30 * time.Second

// settledCores is the agent CPU below which it is idle again (the steady
// cost of tailing files and scraping host metrics is a few hundredths).
const settledCores = 0.1

// applyShipping stops or starts the node agent as the step declares. It
// returns a failed gate when that could not be done.
func (r *Runner) applyShipping(ctx context.Context, st experiment.Step) (results.Gate, bool) {
	if r.Agent == nil {
		return results.Gate{}, true
	}
	if st.ShippingOff() && !r.agentPaused {
		if err := r.Agent.Pause(ctx); err != nil {
			return results.Gate{Name: gates.Shipping, Detail: "shipping = \"off\": stopping the node agent: " + err.Error()}, false
		}
		r.agentPaused = true
		fmt.Fprintf(r.Out, "  node agent %s stopped for the steps with shipping = \"off\"\n", r.Agent.Name())
	}
	if !st.ShippingOff() && r.agentPaused {
		if err := r.resumeAgent(ctx); err != nil {
			return results.Gate{Name: gates.Shipping, Detail: err.Error()}, false
		}
	}
	return results.Gate{}, true
}

// resumeAgent runs the paused agent again and waits until it has caught up.
func (r *Runner) resumeAgent(ctx context.Context) error {
	if err := r.Agent.Resume(ctx, resumeBound); err != nil {
		return fmt.Errorf("node agent: %w", err)
	}
	r.agentPaused = false
	began := time.Now()
	settled := false
	for time.Since(began) < settleBound && ctx.Err() == nil {
		tasks, err := r.Agent.Tasks(ctx)
		if err != nil || len(tasks) == 0 {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		s := startCPUSampler(tasks, time.Second, r.Nodes)
		from := time.Now()
		time.Sleep(2 * time.Second)
		use := s.finish(from, time.Now())
		cores := 0.0
		for _, t := range use {
			cores += t.Cores
		}
		if cores < settledCores {
			settled = true
			break
		}
	}
	note := "caught up"
	if !settled {
		note = fmt.Sprintf("still busy after %s", settleBound)
	}
	fmt.Fprintf(r.Out, "  node agent %s running again (%s in %s)\n", r.Agent.Name(), note, time.Since(began).Round(100*time.Millisecond))
	return nil
}

// shippingWatch observes the agent over one step's load: its tasks' CPU,
// and every agent binary on the step's nodes at any of its looks, one a second.
type shippingWatch struct {
	nodes nodeprobe.Resolver
	mode  string
	// undeclared: the spec left shipping unset and the cluster has no agent
	undeclared bool
	agent      string
	tasks      []orchestrator.Limits
	sampler    *cpuSampler
	procs      *processWatch
	err        error
	logsURL    string
	jobs       []string
}

// watchShipping starts watching; lims are the step's tasks, whose nodes are
// looked at for agent processes with the agent's own.
func (r *Runner) watchShipping(ctx context.Context, st experiment.Step, dep *deployment, lims []orchestrator.Limits) *shippingWatch {
	w := &shippingWatch{mode: st.Shipping, nodes: r.Nodes}
	if logs, shipped := dep.orch.(orchestrator.ShippedLogs); shipped && r.Agent != nil {
		w.logsURL = r.LogsURL
		for _, d := range dep.jobs {
			w.jobs = append(w.jobs, logs.ShippedLogJob(d))
		}
	}
	if w.mode == "" {
		w.mode = experiment.ShippingOn
		w.undeclared = r.Agent == nil
	}
	if r.Agent != nil {
		w.agent = r.Agent.Name()
		w.tasks, w.err = r.Agent.Tasks(ctx)
	}
	watched := watchedNodes(r.Nodes, lims, w.tasks)
	w.procs = startProcessWatch(func() ([]string, error) { return agentProcesses(ctx, watched, &r.away) }, time.Second)
	w.sampler = startCPUSampler(w.tasks, time.Second, r.Nodes)
	return w
}

// finish stops the watch and returns the step's shipping record over
// [from, to]; a zero window (no load result) records processes only.
func (w *shippingWatch) finish(from, to time.Time) results.Shipping {
	rec := results.Shipping{Mode: w.mode, Undeclared: w.undeclared, LogsURL: w.logsURL, Jobs: w.jobs}
	cpu := w.sampler.finish(from, to)
	var procErr error
	rec.Processes, rec.ProcessLooks, procErr = w.procs.finish()
	if procErr != nil {
		rec.ProcessError = procErr.Error()
	}
	if len(w.tasks) > 0 {
		rec.Agent = w.agent
	}
	for _, t := range cpu {
		rec.Cores += t.Cores
		rec.Tasks = append(rec.Tasks, t)
	}
	for _, l := range w.tasks {
		if b, err := w.nodes.Node(l.Node).ResidentBytes(context.Background(), l.MemoryCgroupPath); err == nil {
			rec.ResidentBytes += b
		}
	}
	return rec
}
