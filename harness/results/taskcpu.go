package results

import (
	"encoding/json"
	"fmt"
	"sort"
)

// TaskCPU is the CPU one task used during a step's measured period, read
// from its cgroup: the figure that says which service saturates first.
type TaskCPU struct {
	Task    string `json:"task"`
	Group   string `json:"group"`
	AllocID string `json:"alloc_id"`
	// Cores is the average CPU used over the window.
	Cores float64 `json:"cores"`
	// LimitCores is the enforced quota; 0 when the task has none.
	LimitCores float64 `json:"limit_cores"`
	// Utilization is Cores / LimitCores (0 without a quota).
	Utilization float64 `json:"utilization"`
	// QuotaCores is the task's own CFS quota (0: none). Only then does its
	// cgroup count throttled periods: a cpuset or an enclosing cgroup's
	// quota caps it without them.
	QuotaCores float64 `json:"quota_cores,omitempty"`
	// ThrottledRatio is the share of CFS periods in which the quota ran out.
	ThrottledRatio float64 `json:"throttled_ratio"`
	// WindowSeconds is the span the figures cover.
	WindowSeconds float64 `json:"window_seconds"`
	// Datastore marks a task the pack declares a datastore (contract.RoleDatastore).
	Datastore bool `json:"datastore,omitempty"`
}

func (t TaskCPU) String() string {
	if t.LimitCores == 0 {
		return fmt.Sprintf("%s %.3f cores (no quota)", t.Task, t.Cores)
	}
	return fmt.Sprintf("%s %.0f%% of %.3g cores, throttled in %.0f%% of periods", t.Task, 100*t.Utilization, t.LimitCores, 100*t.ThrottledRatio)
}

// SortTaskCPU orders tasks hottest first: capped tasks by utilization, then
// uncapped ones by cores used.
func SortTaskCPU(ts []TaskCPU) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if (a.LimitCores > 0) != (b.LimitCores > 0) {
			return a.LimitCores > 0
		}
		if a.Utilization != b.Utilization {
			return a.Utilization > b.Utilization
		}
		return a.Cores > b.Cores
	})
}

// TaskCPUOf returns the step's per-task CPU, hottest first, whether the
// step was made in this process or read back from the archive.
func TaskCPUOf(r StepResult) []TaskCPU {
	raw, ok := r.Metadata["task_cpu"]
	if !ok {
		return nil
	}
	if ts, ok := raw.([]TaskCPU); ok {
		return ts
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var ts []TaskCPU
	if json.Unmarshal(b, &ts) != nil {
		return nil
	}
	SortTaskCPU(ts)
	return ts
}

// TaskCPULevel is, for one configuration at one load level, each task's
// median utilization over the valid repetitions, hottest first.
type TaskCPULevel struct {
	Configuration string
	Level         string
	key           float64
	Tasks         []TaskCPU // Cores, Utilization and ThrottledRatio are medians
}

// SummarizeTaskCPU groups the valid steps' task CPU by configuration and
// level. Instances of a task (horizontal variants) count separately in each
// repetition, so the hottest instance decides.
func SummarizeTaskCPU(steps []StepResult) []TaskCPULevel {
	type key struct {
		config string
		level  float64
	}
	type acc struct {
		label               string
		limit               map[string]float64 // the task's quota (the same in every repetition)
		cores, util, thrott map[string][]float64
	}
	groups := map[key]*acc{}
	for _, st := range steps {
		ts := TaskCPUOf(st)
		if !st.Measured() || len(ts) == 0 {
			continue
		}
		k := key{st.Configuration(), levelKey(st.OfferedRPS, st.Users)}
		g := groups[k]
		if g == nil {
			g = &acc{label: LevelStats{OfferedRPS: st.OfferedRPS, Users: st.Users}.Level(), limit: map[string]float64{},
				cores: map[string][]float64{}, util: map[string][]float64{}, thrott: map[string][]float64{}}
			groups[k] = g
		}
		hottest := map[string]TaskCPU{}
		for _, t := range ts {
			if h, ok := hottest[t.Task]; !ok || t.Utilization > h.Utilization || t.Cores > h.Cores && t.LimitCores == 0 {
				hottest[t.Task] = t
			}
		}
		for name, t := range hottest {
			g.cores[name] = append(g.cores[name], t.Cores)
			g.util[name] = append(g.util[name], t.Utilization)
			g.thrott[name] = append(g.thrott[name], t.ThrottledRatio)
			g.limit[name] = t.LimitCores
		}
	}
	var out []TaskCPULevel
	for k, g := range groups {
		l := TaskCPULevel{Configuration: k.config, Level: g.label, key: k.level}
		for name := range g.cores {
			t := TaskCPU{Task: name, Cores: median(g.cores[name]), LimitCores: g.limit[name],
				Utilization: median(g.util[name]), ThrottledRatio: median(g.thrott[name])}
			l.Tasks = append(l.Tasks, t)
		}
		SortTaskCPU(l.Tasks)
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Configuration != out[j].Configuration {
			return out[i].Configuration < out[j].Configuration
		}
		return out[i].key < out[j].key
	})
	return out
}
