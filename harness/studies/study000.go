package studies

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orchbench/orchbench/harness/results"
)

// Study 000 (Grigoryev 2022): the same small apps as a process per VM (AWS
// ASG) and as containers (EKS); published as EKS ÷ ASG raw qps and qps per
// CPU %. Ours: a process on Nomad's exec driver against a container on the
// docker driver (and on any other orchestrator in the sweep).
var published000 = map[string][2]float64{
	"apache": {0.446, 0.454},
	"taewa":  {1.077, 0.576},
	"riwai":  {1.129, 0.598},
	"raupi":  {1.731, 1.602},
}

var difficulty000 = map[string]string{"1": "lite", "20000": "normal", "80000": "extra"}

type key000 struct{ app, difficulty, orchestrator string }

type sample000 struct{ qps, perCore []float64 }

func study000(s sweep) *Table {
	if hasScaling(s) {
		return study000Scaling(s)
	}
	process := map[key000]*sample000{}   // orchestrator left empty: Nomad exec
	container := map[key000]*sample000{} // docker on each orchestrator
	for _, m := range s.steps {
		k := key000{app: m.plan.Pack, difficulty: varString(m.plan.Vars, "difficulty")}
		target := container
		if varString(m.plan.Vars, "driver") == "exec" {
			if m.plan.Orchestrator != "nomad" {
				continue
			}
			target = process
		} else {
			k.orchestrator = m.plan.Orchestrator
		}
		smp := target[k]
		if smp == nil {
			smp = &sample000{}
			target[k] = smp
		}
		r := m.result
		smp.qps = append(smp.qps, r.AchievedRPS)
		if q, ok := perCore(r); ok {
			smp.perCore = append(smp.perCore, q)
		}
	}
	t := &Table{
		Study: "000",
		Title: "Study 000: container ÷ process (EKS ÷ ASG), raw qps and qps per core used",
		Columns: []string{"app", "difficulty", "container on", "container qps", "process qps", "container ÷ process qps",
			"container qps/core", "process qps/core", "container ÷ process qps/core", "published EKS ÷ ASG (qps / efficiency)"},
		Source: "Grigoryev 2022 (../shared/STUDIES.md, study 000): EKS ÷ ASG on t3.medium, Fortio closed loop at max rate",
		Notes: []string{
			"process = Nomad's exec driver (the app's runtime as a plain process, a cpuset of whole cores); container = the docker driver on the same node, the same cores; the study compared an ASG of t3.medium VMs with EKS pods on t3.medium nodes behind a Classic ELB.",
			"both forms run the same runtime files (the base image's node, python3 and apache2: the exec chroot is the image's userland), so they differ in isolation and in how the core is given (a CFS quota in the container, an exclusive cpuset for the process), not in the runtime.",
			"efficiency = achieved qps ÷ cores the app's tasks used (their cgroup CPU over the step; none over less than 0.01 cores); the study divided qps by the instances' CPU %. Ratios of ratios are comparable, absolute figures are not.",
			"one 2-core machine runs the app, Nomad and the load generator; the study's load came from separate machines. Its scaling stage is a sweep of its own (experiments/study-000-scaling.hcl), whose report has the scaling-time table.",
		},
	}
	var keys []key000
	for k := range container {
		keys = append(keys, k)
	}
	for k := range process {
		if !hasApp(keys, k) {
			keys = append(keys, key000{app: k.app, difficulty: k.difficulty, orchestrator: "(none)"})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.app != b.app {
			return a.app < b.app
		}
		if a.difficulty != b.difficulty {
			return difficultyOrder(a.difficulty) < difficultyOrder(b.difficulty)
		}
		return a.orchestrator < b.orchestrator
	})
	for _, k := range keys {
		c := container[k]
		if c == nil {
			c = &sample000{}
		}
		p := process[key000{app: k.app, difficulty: k.difficulty}]
		if p == nil {
			p = &sample000{}
		}
		pub := "-"
		if f, ok := published000[k.app]; ok {
			pub = fmt.Sprintf("%.3f / %.3f", f[0], f[1])
		}
		t.Rows = append(t.Rows, []string{
			k.app, difficultyLabel(k.difficulty), k.orchestrator,
			fmtEstimate(results.MedianCI(c.qps), 0), fmtEstimate(results.MedianCI(p.qps), 0), fmtEstimate(results.RatioCI(c.qps, p.qps), 3),
			fmtEstimate(results.MedianCI(c.perCore), 0), fmtEstimate(results.MedianCI(p.perCore), 0), fmtEstimate(results.RatioCI(c.perCore, p.perCore), 3),
			pub,
		})
	}
	if s.invalid > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d invalid steps are left out.", s.invalid))
	}
	return t
}

func hasApp(keys []key000, k key000) bool {
	for _, x := range keys {
		if x.app == k.app && x.difficulty == k.difficulty {
			return true
		}
	}
	return false
}

func difficultyLabel(n string) string {
	if n == "" {
		return "static"
	}
	if l, ok := difficulty000[n]; ok {
		return l + " (n=" + n + ")"
	}
	return "n=" + n
}

func difficultyOrder(n string) string {
	// numeric order for the usual sizes, lexical otherwise
	return fmt.Sprintf("%012s", strings.TrimSpace(n))
}
