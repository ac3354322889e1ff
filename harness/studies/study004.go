package studies

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/harness/results"
)

// Study 004 (UCD PA3): Node/Express + sequelize against Kotlin/Spring Boot
// + JPA on Postgres; mean latency of a JMeter plan (5 threads x 20 loops x
// 5 requests, 1 s timeout counted as an error and as 1000 ms) at 1, 2 and 5
// replicas without limits and at 1 replica limited to 1 core.
var published004 = map[string]map[string]string{
	"books-node":   {"1": "308", "2": "178", "5": "122", "1 core": "314"},
	"books-kotlin": {"1": "117", "2": "84", "5": "64", "1 core": "238 (cpu-intensive 994 ms, 92 % errors)"},
}

var language004 = map[string]string{"books-node": "Node/Express + sequelize", "books-kotlin": "Kotlin/Spring Boot + JPA"}

type key004 struct{ app, config, orchestrator string }

type sample004 struct{ mean, errRatio, cpuErr []float64 }

func study004(s sweep) *Table {
	samples := map[key004]*sample004{}
	for _, m := range s.steps {
		k := key004{app: m.plan.Pack, config: config004(m), orchestrator: m.plan.Orchestrator}
		smp := samples[k]
		if smp == nil {
			smp = &sample004{}
			samples[k] = smp
		}
		r := m.result
		smp.mean = append(smp.mean, r.Corrected.Mean)
		smp.errRatio = append(smp.errRatio, r.ErrorRatio())
		for _, ep := range r.Endpoints {
			if strings.Contains(ep.Name, "cpu-intensive") && ep.Requests > 0 {
				smp.cpuErr = append(smp.cpuErr, float64(ep.Errors)/float64(ep.Requests))
			}
		}
	}
	t := &Table{
		Study: "004",
		Title: "Study 004: mean latency (ms) per language and replicas, and at a 1-core limit",
		Columns: []string{"language", "configuration", "orchestrator", "mean latency ms", "errors %", "cpu-intensive errors %",
			"published mean ms"},
		Source: "UCD PA3 (../shared/STUDIES.md, study 004): GKE, JMeter 5 threads x 20 loops x 5 requests, 1 s timeout",
		Notes: []string{
			"replicas run without limits on one 2-core machine that also runs Postgres, Nomad and the load generator, so 2 and 5 replicas share the same two cores; the study's replicas were spread over GKE nodes.",
			"a request that times out counts as an error, and as the timeout in the mean, as JMeter recorded it in the study.",
		},
	}
	var keys []key004
	for k := range samples {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.app != b.app {
			return a.app > b.app // node first, as published
		}
		if a.config != b.config {
			return configOrder(a.config) < configOrder(b.config)
		}
		return a.orchestrator < b.orchestrator
	})
	for _, k := range keys {
		smp := samples[k]
		pub := published004[k.app][k.config]
		if pub == "" {
			pub = "-"
		}
		lang := language004[k.app]
		if lang == "" {
			lang = k.app
		}
		t.Rows = append(t.Rows, []string{
			lang, describeConfig(k.config), k.orchestrator,
			fmtEstimate(results.MedianCI(smp.mean), 0), percent(results.MedianCI(smp.errRatio)), percent(results.MedianCI(smp.cpuErr)), pub,
		})
	}
	if s.invalid > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d invalid steps are left out.", s.invalid))
	}
	return t
}

// config004 names the step's shape: the replica count without limits, or
// "1 core" for one replica of the baseline variant (one core per replica,
// times resource_scale) at full size.
func config004(m measured) string {
	replicas := instanceCount(m, "1")
	if m.plan.Variant == "unlimited" {
		return replicas
	}
	cores := varString(m.plan.Vars, "resource_scale")
	if cores == "" {
		cores = "1"
	}
	if replicas == "1" && cores == "1" {
		return "1 core"
	}
	return replicas + " x " + cores + " cores"
}

func describeConfig(c string) string {
	if _, err := strconv.Atoi(c); err == nil {
		if c == "1" {
			return "1 replica, no limits"
		}
		return c + " replicas, no limits"
	}
	if c == "1 core" {
		return "1 replica, 1 core"
	}
	return c
}

// configOrder is a sort key: whole numbers in numeric order, anything else
// after them (study 004's "1 core", study 001's replicas, study 003's
// instances and cache keys).
func configOrder(c string) string {
	if n, err := strconv.Atoi(c); err == nil {
		return fmt.Sprintf("0%06d", n)
	}
	return "1" + c
}

func percent(e results.Estimate) string {
	if e.N == 0 {
		return "-"
	}
	scaled := e // the interval's method and coverage carry over
	scaled.Median, scaled.Lo, scaled.Hi = 100*e.Median, 100*e.Lo, 100*e.Hi
	return fmtEstimate(scaled, 1)
}
