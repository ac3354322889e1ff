package studies

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/orchbench/orchbench/harness/results"
)

// Study 001 (CMPE48A voting app): mean latency of a Locust flow (a vote,
// see-all, see-cities, then 1-3 s of think time) per storage mode, per
// replica count and per user population.
//
// The published figures are the Aggregated mean of the study's 43 Locust
// reports (hks1444/cmpe48a, results/ and VM_results/, 2024-12-07): one VM
// campaign over 3 backend x 3 database VM sizes at 1, 10, 30, 50 and 100
// users. Per user count they are summarised as min, median and max over the
// VM shapes that ran it; the reports do not name the storage mode, and the
// repository's code of that date reads as v1 (psycopg2, a connection per
// call), with both reads served by cloud functions rather than Django.
type published001Users struct {
	shapes           int
	min, median, max float64
}

var published001 = map[int]published001Users{
	1:   {shapes: 9, min: 308.4, median: 341.4, max: 439.6},
	10:  {shapes: 9, min: 313.2, median: 329.5, max: 564.9},
	30:  {shapes: 9, min: 400.2, median: 546.1, max: 1025.7},
	50:  {shapes: 8, min: 559.1, median: 856.05, max: 1814.0},
	100: {shapes: 8, min: 1262.5, median: 1770.25, max: 3554.5},
}

type key001 struct {
	mode, server, replicas, variant, orchestrator, load string
	users                                               int
}

type sample001 struct{ mean, errRatio, rps []float64 }

func study001(s sweep) *Table {
	samples := map[key001]*sample001{}
	for _, m := range s.steps {
		k := key001{
			mode:         orDefault(varString(m.plan.Vars, "storage_mode"), "?"),
			server:       orDefault(varString(m.plan.Vars, "server"), "runserver"),
			replicas:     instanceCount(m, "2"), // packs/voting's horizontal: 2
			variant:      m.plan.Variant,
			orchestrator: m.plan.Orchestrator,
			load:         m.plan.Load.RunnerName(),
			users:        m.plan.Users,
		}
		smp := samples[k]
		if smp == nil {
			smp = &sample001{}
			samples[k] = smp
		}
		r := m.result
		smp.mean = append(smp.mean, r.Corrected.Mean)
		smp.errRatio = append(smp.errRatio, r.ErrorRatio())
		smp.rps = append(smp.rps, r.AchievedRPS)
	}
	t := &Table{
		Study: "001",
		Title: "Study 001: mean latency (ms) of the voting flow per storage mode, replicas and users",
		Columns: []string{"storage mode", "server", "replicas", "variant", "users", "orchestrator", "load", "mean latency ms", "errors %", "requests/s",
			"published mean ms (VM campaign: min / median / max over its VM shapes)"},
		Source: "CMPE48A voting app (../shared/STUDIES.md, study 001): 43 Locust reports of hks1444/cmpe48a, 3 backend x 3 database VM sizes on GCE, 60 s runs",
		Notes: []string{
			"the published column is the study's VM campaign, whatever storage mode ran there (its code of that date reads as v1, with both reads answered by cloud functions, not by Django); it is beside every mode of ours for scale, not as the same configuration.",
			"the study's GKE runs (1/2/5/10 replicas, no limits) left no report in the repository; STUDIES.md cites 2030 ms aggregated for 10 Postgres pods.",
			"the study's runs lasted 60 s including a spawn of 1 or 2 users per second, so its 50- and 100-user figures held their population for about 10 s; experiments/study-001.hcl spawns and measures so too.",
			"load: the study's own tool (locust, the spec's locustfile) or orchbench's generator running the same flow (workload voting:study-001); the study's ballots were partly invalid (a seventh party, totals up to 450), which its app skipped and ours refuses, so both send valid ones.",
			"one 2-core machine runs the app, PostgreSQL, Redis, the orchestrator and the load generator; the study's load came from elsewhere and its database had a VM of its own.",
		},
	}
	keys := make([]key001, 0, len(samples))
	for k := range samples {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch {
		case a.mode != b.mode:
			return a.mode < b.mode
		case a.server != b.server:
			return a.server > b.server // runserver (the study's) first
		case a.replicas != b.replicas:
			return configOrder(a.replicas) < configOrder(b.replicas)
		case a.variant != b.variant:
			return a.variant < b.variant
		case a.users != b.users:
			return a.users < b.users
		case a.orchestrator != b.orchestrator:
			return a.orchestrator < b.orchestrator
		}
		return a.load < b.load
	})
	for _, k := range keys {
		smp := samples[k]
		pub := "-"
		if p, ok := published001[k.users]; ok {
			pub = fmt.Sprintf("%.0f / %.0f / %.0f (%d shapes)", p.min, p.median, p.max, p.shapes)
		}
		t.Rows = append(t.Rows, []string{
			k.mode, k.server, k.replicas, k.variant, strconv.Itoa(k.users), k.orchestrator, k.load,
			fmtEstimate(results.MedianCI(smp.mean), 0), percent(results.MedianCI(smp.errRatio)), fmtEstimate(results.MedianCI(smp.rps), 1), pub,
		})
	}
	if s.invalid > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d invalid steps are left out.", s.invalid))
	}
	return t
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
