package results

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// RequestCPU is what one request cost each task of an application, for one
// configuration at one load level: the figure that says which task an
// application's capacity is, and what to make cheaper.
type RequestCPU struct {
	Configuration string
	Level         string
	// Steps is how many measured repetitions the medians are over.
	Steps       int
	AchievedRPS float64
	// BusyCores is the application's CPU (every task, the load generator
	// not included), DatastoreCores its datastores' part.
	BusyCores      float64
	DatastoreCores float64
	Tasks          []TaskRequestCPU // most expensive first
	key            float64
}

// TaskRequestCPU is one task's CPU per request, all its instances together.
type TaskRequestCPU struct {
	Task      string
	Datastore bool
	Cores     float64
	// MillisPerRequest is CPU milliseconds per achieved request.
	MillisPerRequest float64
	// ShareOfBusy is the task's part of BusyCores.
	ShareOfBusy float64
}

// Busiest is the task that used the most CPU, the one a saturated
// application waits on first when nothing caps it.
func (r RequestCPU) Busiest() TaskRequestCPU {
	if len(r.Tasks) == 0 {
		return TaskRequestCPU{}
	}
	return r.Tasks[0]
}

// MillisPerRequest sums the tasks' CPU per request, datastores apart.
func (r RequestCPU) MillisPerRequest() (all, datastores float64) {
	for _, t := range r.Tasks {
		all += t.MillisPerRequest
		if t.Datastore {
			datastores += t.MillisPerRequest
		}
	}
	return all, datastores
}

// CPUPerRequest groups the measured steps (valid or broken; invalid and
// skipped ones measured nothing) by configuration and level and takes, per
// task, the median over repetitions of its CPU per achieved request. The
// instances of one task are summed: a request costs all of them. A step
// that served no request, or whose tasks' CPU was not read, is left out.
func CPUPerRequest(steps []StepResult) []RequestCPU {
	type key struct {
		config string
		level  float64
	}
	type acc struct {
		label                 string
		rps, busy, datastores []float64
		cores, perRequest     map[string][]float64
		datastore             map[string]bool
	}
	groups := map[key]*acc{}
	for _, st := range steps {
		ts := TaskCPUOf(st)
		if !st.Measured() || len(ts) == 0 || st.AchievedRPS <= 0 {
			continue
		}
		k := key{st.Configuration(), levelKey(st.OfferedRPS, st.Users)}
		g := groups[k]
		if g == nil {
			g = &acc{label: LevelStats{OfferedRPS: st.OfferedRPS, Users: st.Users}.Level(),
				cores: map[string][]float64{}, perRequest: map[string][]float64{}, datastore: map[string]bool{}}
			groups[k] = g
		}
		perTask := map[string]float64{}
		for _, t := range ts {
			perTask[t.Task] += t.Cores
			g.datastore[t.Task] = g.datastore[t.Task] || t.Datastore
		}
		for task, cores := range perTask {
			g.cores[task] = append(g.cores[task], cores)
			g.perRequest[task] = append(g.perRequest[task], 1000*cores/st.AchievedRPS)
		}
		busy, ds := AppCPU(ts)
		g.rps = append(g.rps, st.AchievedRPS)
		g.busy = append(g.busy, busy)
		g.datastores = append(g.datastores, ds)
	}
	var out []RequestCPU
	for k, g := range groups {
		r := RequestCPU{Configuration: k.config, Level: g.label, key: k.level, Steps: len(g.rps),
			AchievedRPS: median(g.rps), BusyCores: median(g.busy), DatastoreCores: median(g.datastores)}
		for task := range g.cores {
			t := TaskRequestCPU{Task: task, Datastore: g.datastore[task], Cores: median(g.cores[task]), MillisPerRequest: median(g.perRequest[task])}
			if r.BusyCores > 0 {
				t.ShareOfBusy = t.Cores / r.BusyCores
			}
			r.Tasks = append(r.Tasks, t)
		}
		slices.SortFunc(r.Tasks, func(a, b TaskRequestCPU) int {
			return cmp.Or(cmp.Compare(b.MillisPerRequest, a.MillisPerRequest), cmp.Compare(a.Task, b.Task))
		})
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b RequestCPU) int {
		return cmp.Or(cmp.Compare(a.Configuration, b.Configuration), cmp.Compare(a.key, b.key))
	})
	return out
}

// IdleMillisPerRequest is the CPU per request under which FormatRequestCPU
// leaves a task out: a service the workload does not call still spends a
// few microseconds per request on health checks and timers.
const IdleMillisPerRequest = 0.01

// FormatRequestCPU prints one block per configuration and level: a header
// with the achieved rate and the busy CPU, then one line per task.
func FormatRequestCPU(w io.Writer, rows []RequestCPU) error {
	for i, r := range rows {
		if i > 0 {
			fmt.Fprintln(w)
		}
		all, ds := r.MillisPerRequest()
		b := r.Busiest()
		fmt.Fprintf(w, "%s at %s: %.0f rps over %d repetition(s); %.2f cores busy (datastores %.2f); %.2f ms CPU per request (datastores %.2f); busiest %s at %.0f %% of the busy CPU\n",
			r.Configuration, r.Level, r.AchievedRPS, r.Steps, r.BusyCores, r.DatastoreCores, all, ds, b.Task, 100*b.ShareOfBusy)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  task\tms CPU/request\tcores\tshare of busy\t")
		idle := 0
		for _, t := range r.Tasks {
			if t.MillisPerRequest < IdleMillisPerRequest {
				idle++
				continue
			}
			name := t.Task
			if t.Datastore {
				name += " (datastore)"
			}
			fmt.Fprintf(tw, "  %s\t%.3f\t%.3f\t%.1f %%\t\n", name, t.MillisPerRequest, t.Cores, 100*t.ShareOfBusy)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if idle > 0 {
			fmt.Fprintf(w, "  and %d task(s) under %.2f ms per request, which this workload does not call\n", idle, IdleMillisPerRequest)
		}
	}
	return nil
}
