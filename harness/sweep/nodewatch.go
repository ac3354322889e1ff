package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/nodes"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// watchLeaders follows each control plane's leadership from the injection
// until another node holds it, or the step ends.
func (nf *nodeFault) watchLeaders(ctx context.Context) <-chan []results.LeaderChange {
	out := make(chan []results.LeaderChange, 1)
	changes := append([]results.LeaderChange(nil), nf.rec.Leaders...)
	go func() {
		var wg sync.WaitGroup
		for i := range changes {
			wg.Add(1)
			go func(l *results.LeaderChange) {
				defer wg.Done()
				for time.Now().Before(nf.end) {
					// the leader's own node counts once it is back (with
					// one server there is no other), or when it was not
					// the node hit (Consul's leader elsewhere)
					n, err := nf.ctl.Leader(ctx, nodes.ControlPlane(l.ControlPlane))
					if err == nil && (n.Name != l.Before || nf.restoredAt() != nil || l.Before != nf.rec.Node.Name) {
						s := time.Since(nf.rec.At).Seconds()
						l.After, l.AfterSeconds = n.Name, &s
						return
					}
					if sleepCtx(ctx, watchPoll) != nil {
						return
					}
				}
			}(&changes[i])
		}
		wg.Wait()
		out <- changes
	}()
	return out
}

// watchRecovery polls until every instance of the deployment runs healthy
// on nodes that are up: as many as before the fault, none on the node hit
// while it is down or cut off, and the orchestrator's own health check
// passing. The orchestrator may list an instance on a dead node as running
// for minutes (Nomad until the node's heartbeat expires), which is why the
// node is checked apart.
func (nf *nodeFault) watchRecovery(ctx context.Context, hit nodes.Node, want int) {
	name := hit.NameIn(nf.o.Name())
	nodeAway := takesNodeAway(nf.fault.Kind)
	var last string
	for {
		ok, why := nf.allHealthy(ctx, name, nodeAway && nf.restoredAt() == nil, want)
		if ok {
			s := time.Since(nf.rec.At).Seconds()
			nf.rec.AllHealthySeconds = &s
			return
		}
		last = why
		if time.Now().After(nf.end) || sleepCtx(ctx, watchPoll) != nil {
			nf.rec.AllHealthyNote = last + nf.whyShort(ctx, want)
			return
		}
	}
}

// allHealthy is one look at the deployment; why says what is missing.
func (nf *nodeFault) allHealthy(ctx context.Context, hitNode string, hitAway bool, want int) (bool, string) {
	ins, err := nf.o.Instances(ctx, nf.app)
	if err != nil {
		return false, "the instances could not be read: " + err.Error()
	}
	var on []string
	for _, in := range ins {
		if hitAway && in.Node == hitNode {
			on = append(on, in.Label())
		}
	}
	if len(on) > 0 {
		return false, fmt.Sprintf("%d of %d instances still listed on %s, which is away: %s", len(on), len(ins), hitNode, strings.Join(on, ", "))
	}
	if len(ins) < want {
		return false, fmt.Sprintf("%d of %d instances running", len(ins), want)
	}
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := nf.o.WaitHealthy(hctx, nf.app, 3*time.Second); err != nil {
		return false, "not healthy: " + err.Error()
	}
	return true, ""
}

// whyShort asks the orchestrator, once, why instances are missing when
// the step ends short of them: its health wait names what it could not
// place and why ("memory exhausted on 2 nodes"), which a count alone does
// not (Nomad once ended three kill-node steps at 24 of 27 unexplained).
// Looked at only then, so that the watch's one-second polls stay quick.
func (nf *nodeFault) whyShort(ctx context.Context, want int) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if ins, err := nf.o.Instances(ctx, nf.app); err != nil || len(ins) >= want {
		return ""
	}
	if err := nf.o.WaitHealthy(ctx, nf.app, time.Second); err != nil {
		return "; " + err.Error()
	}
	return ""
}

// probeJobName is the job a kill-leader submits to see whether the cluster
// still schedules.
const probeJobName = "orchbench-scheduling-probe"

// probeScheduling submits a one-instance job right after the leader's
// loss, again every second while submissions are refused, and records when
// one was accepted and when its instance ran. The job goes when it ran, or
// when the step ends.
func (nf *nodeFault) probeScheduling(ctx context.Context) <-chan results.SchedulingProbe {
	out := make(chan results.SchedulingProbe, 1)
	go func() {
		p := results.SchedulingProbe{Job: probeJobName}
		job := schedulingProbeJob()
		// the nodes pull it where they pull the app's images
		nf.registry.Rewrite([]*api.Job{job})
		w, err := orchestrator.NewWorkload(job)
		if err != nil {
			p.LastError = err.Error()
			out <- p
			return
		}
		var dep *orchestrator.Deployment
		for time.Now().Before(nf.end) {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			dep, err = nf.o.Deploy(sctx, w)
			cancel()
			if err == nil {
				s := time.Since(nf.rec.At).Seconds()
				p.AcceptedSeconds = &s
				break
			}
			p.Attempts++
			p.LastError = err.Error()
			if sleepCtx(ctx, watchPoll) != nil {
				break
			}
		}
		if dep != nil {
			// placed means running on a node: the orchestrator's own health
			// verdict would add its minimum healthy time (Nomad's 10 s)
			for time.Now().Before(nf.end) {
				ins, err := nf.o.Instances(ctx, dep)
				if err == nil && len(ins) == 0 {
					err = errors.New("accepted, no instance running yet" + nf.probeEvents(ctx, dep))
				}
				if err == nil {
					s := time.Since(nf.rec.At).Seconds()
					p.PlacedSeconds = &s
					p.LastError = ""
					break
				}
				p.LastError = err.Error()
				if sleepCtx(ctx, watchPoll) != nil {
					break
				}
			}
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			if err := nf.o.Stop(stop, dep); err != nil && p.LastError == "" {
				p.LastError = "stopping the probe job: " + err.Error()
			}
			cancel()
		}
		out <- p
	}()
	return out
}

// probeEvents is what the orchestrator says of the probe job's tasks (the
// last few events: placed, a pull failing, no suitable node), so that a
// probe accepted but never running says why; "" when it says nothing.
func (nf *nodeFault) probeEvents(ctx context.Context, dep *orchestrator.Deployment) string {
	evs, err := nf.o.TaskEvents(ctx, dep, nf.rec.At)
	if err != nil {
		return "; its task events could not be read: " + err.Error()
	}
	if len(evs) == 0 {
		return "; no task event"
	}
	var last []string
	for _, e := range evs[max(0, len(evs)-3):] {
		last = append(last, e.String())
	}
	return "; its last task events: " + strings.Join(last, ", ")
}

// schedulingProbeJob is the smallest job every adapter deploys: one pause
// container, no port, no check, a few MHz.
func schedulingProbeJob() *api.Job {
	str := func(s string) *string { return &s }
	one, cpu, mem := 1, 20, 16
	return &api.Job{
		ID: str(probeJobName), Name: str(probeJobName), Type: str("service"),
		Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name:  str("probe"),
			Count: &one,
			Tasks: []*api.Task{{
				Name: "pause", Driver: "docker",
				Config:    map[string]any{"image": "orchbench/pause:local"},
				Resources: &api.Resources{CPU: &cpu, MemoryMB: &mem},
			}},
		}},
	}
}

// sleepCtx waits d unless ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
