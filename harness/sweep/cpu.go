package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// cpuSampler reads every task's cgroup CPU accounting once a second while a
// step's load runs, so the CPU each task used can be cut to the measured
// period afterwards (the load job's start-up and warm-up fall outside it).
type cpuSampler struct {
	lims []orchestrator.Limits
	// nodes are the lims' nodes, by the same index
	nodes []nodeprobe.Node
	// samples, by task in time order, are written only by the sampling
	// goroutine and read by finish after it has ended.
	samples [][]limits.Usage
	stop    chan struct{}
	done    chan struct{}
}

// startCPUSampler samples each task's cgroup on its node, as nodes resolves it.
func startCPUSampler(lims []orchestrator.Limits, every time.Duration, nodes nodeprobe.Resolver) *cpuSampler {
	s := &cpuSampler{lims: lims, samples: make([][]limits.Usage, len(lims)), stop: make(chan struct{}), done: make(chan struct{})}
	for _, l := range lims {
		s.nodes = append(s.nodes, nodes.Node(l.Node))
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				s.sample()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample() {
	for i, l := range s.lims {
		if l.CgroupPath == "" {
			continue
		}
		// A task restarted by a fault gets a new cgroup: its samples end
		// there, and the window is cut to what was read.
		if u, err := s.nodes[i].Usage(context.Background(), l.CgroupPath); err == nil {
			s.samples[i] = append(s.samples[i], u)
		}
	}
}

// finish stops sampling and returns each task's CPU over [from, to], hottest
// first. It uses the samples inside the window when they span most of it,
// and the ones just around it otherwise.
func (s *cpuSampler) finish(from, to time.Time) []results.TaskCPU {
	close(s.stop)
	<-s.done
	var out []results.TaskCPU
	for i, l := range s.lims {
		first, last, ok := window(s.samples[i], from, to)
		if !ok {
			continue
		}
		cores, throttled := first.Between(last)
		t := results.TaskCPU{Task: l.Task, Group: l.Group, AllocID: l.ID, Cores: cores,
			LimitCores: l.EffectiveCores, QuotaCores: l.QuotaCores, ThrottledRatio: throttled, WindowSeconds: last.At.Sub(first.At).Seconds(),
			Datastore: l.Declared.Datastore()}
		// Only a declared limit is one the task can hit (the limits gate has
		// checked it is enforced); an uncapped task's "effective cores" is
		// just the node's cpuset.
		if l.Declared.Cores > 0 && l.EffectiveCores > 0 {
			t.Utilization = cores / l.EffectiveCores
		} else {
			t.LimitCores = 0
		}
		out = append(out, t)
	}
	results.SortTaskCPU(out)
	return out
}

// window picks the pair of samples that best covers [from, to].
func window(us []limits.Usage, from, to time.Time) (first, last limits.Usage, ok bool) {
	if len(us) < 2 {
		return first, last, false
	}
	in := -1
	out := -1
	for i, u := range us {
		if in < 0 && !u.At.Before(from) {
			in = i
		}
		if !u.At.After(to) {
			out = i
		}
	}
	if in >= 0 && out > in && us[out].At.Sub(us[in].At) >= to.Sub(from)/2 {
		return us[in], us[out], true
	}
	// Bracket the window instead: the last sample before it and the first after.
	lo, hi := 0, len(us)-1
	for i, u := range us {
		if !u.At.After(from) {
			lo = i
		}
	}
	for i := len(us) - 1; i >= 0; i-- {
		if !us[i].At.Before(to) {
			hi = i
		}
	}
	if hi <= lo {
		return first, last, false
	}
	return us[lo], us[hi], true
}

// serviceCPU fills in the cores the measured service's instances (those
// behind its endpoints, every task of each) used over the measured period,
// and the throughput per core used: study 000's "weighted qps". It fills
// in the application's figures too (appCPU).
func serviceCPU(sr *results.StepResult, cpu []results.TaskCPU, eps []orchestrator.Endpoint) {
	sr.ServiceCores = gates.ServiceUseOf(cpu, eps).Used
	sr.QPSPerCore, _ = results.PerCore(sr.AchievedRPS, sr.ServiceCores)
	appCPU(sr, cpu)
}

// appCPU fills in the cores every task of the application used (the
// measured service's alone can be a front end that does little, or unknown
// behind a Kubernetes node port), its datastores' share, and the
// throughput per core of the whole.
func appCPU(sr *results.StepResult, cpu []results.TaskCPU) {
	sr.AppCores, sr.DatastoreCores = results.AppCPU(cpu)
	sr.QPSPerAppCore, _ = results.PerCore(sr.AchievedRPS, sr.AppCores)
}

// perCoreLine is the step line's throughput per core, saying which cores
// each figure divides by, and none over fewer than results.MinRatioCores.
func perCoreLine(sr results.StepResult) string {
	var text string
	// inside names what else the parenthesis of cores says
	ratio := func(q, cores float64, whose, inside string) string {
		if q > 0 {
			return fmt.Sprintf(", %.0f rps per core of %s (%.2f cores%s)", q, whose, cores, inside)
		}
		return fmt.Sprintf(", rps per core of %s n/a (%.3f cores%s)", whose, cores, inside)
	}
	if sr.ServiceCores > 0 {
		text += ratio(sr.QPSPerCore, sr.ServiceCores, "the measured service", "")
	}
	if sr.AppCores > 0 {
		datastores := ""
		if sr.DatastoreCores > 0 {
			datastores = fmt.Sprintf(", %.2f in datastores", sr.DatastoreCores)
		}
		text += ratio(sr.QPSPerAppCore, sr.AppCores, "the application", datastores)
	}
	return text
}
