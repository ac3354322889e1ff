package results

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// ParityRow is one thing that must be equal on every orchestrator for a
// comparison of orchestrators to be a comparison of orchestrators alone:
// an enforced limit, the entry kind, a response size, an image, a fact of
// the machine. Values are per orchestrator; a row whose values differ (or
// that one orchestrator lacks) is a mismatch the report flags.
type ParityRow struct {
	App     string `json:"app"`
	Variant string `json:"variant"`
	Aspect  string `json:"aspect"`
	// Values maps orchestrator → what its steps recorded (distinct values
	// joined when the steps disagree among themselves).
	Values   map[string]string `json:"values"`
	Mismatch bool              `json:"mismatch"`
	// Inherent marks rows that are expected to differ (the orchestrator's
	// own version, the load job's kind): shown, never flagged.
	Inherent bool `json:"inherent,omitempty"`
}

// responseTolerance is how far mean response sizes may differ between
// orchestrators before they are flagged: generated content (timelines with
// random text) varies a little from run to run, an empty answer does not.
const responseTolerance = 0.05

// inherentFacts are node facts that differ by orchestrator by nature.
var inherentFacts = map[string]bool{"nomad.version": true, "swarm.version": true, "kubernetes.version": true, "cpu.totalcompute": true}

// parityLimits is the part of an archived limits record parity reads.
type parityLimits struct {
	Group          string  `json:"group"`
	Task           string  `json:"task"`
	EffectiveCores float64 `json:"effective_cores"`
	QuotaCores     float64 `json:"quota_cores"`
	MemoryLimitMiB int     `json:"memory_limit_mib"`
	ImageID        string  `json:"image_id"`
	Declared       struct {
		Cores     float64 `json:"cores"`
		MemoryMiB int     `json:"memory_mib"`
	} `json:"declared"`
}

// Parity compares, for every app and variant run on two or more
// orchestrators, what the measured steps recorded on each. Skipped and
// invalid steps are left out: they measured nothing.
func Parity(steps []StepResult) []ParityRow {
	type key struct{ app, variant, aspect string }
	values := map[key]map[string]map[string]bool{}
	inherent := map[key]bool{}
	orchs := map[[2]string]map[string]bool{}
	add := func(r StepResult, aspect, value string, isInherent bool) {
		k := key{r.App, r.Variant, aspect}
		if values[k] == nil {
			values[k] = map[string]map[string]bool{}
		}
		if values[k][r.Orchestrator] == nil {
			values[k][r.Orchestrator] = map[string]bool{}
		}
		values[k][r.Orchestrator][value] = true
		inherent[k] = inherent[k] || isInherent
	}
	// response sizes are compared with a tolerance, so they are kept as numbers
	type sizeKey struct{ app, variant, endpoint, orch string }
	sizes := map[sizeKey][2]float64{}
	for _, r := range steps {
		if r.Skipped || !r.Measured() {
			continue
		}
		cfg := [2]string{r.App, r.Variant}
		if orchs[cfg] == nil {
			orchs[cfg] = map[string]bool{}
		}
		orchs[cfg][r.Orchestrator] = true
		for _, l := range metadataLimits(r) {
			name := l.Group + "/" + l.Task
			add(r, "limits "+name, fmt.Sprintf("%s cores, %s", coresText(l.EffectiveCores, l.QuotaCores), memText(l.MemoryLimitMiB)), false)
			if l.ImageID != "" {
				add(r, "image "+name, shortImage(l.ImageID), false)
			}
		}
		if entry, ok := r.Metadata["entry"].(string); ok {
			add(r, "entry", entry, false)
		}
		if runner, ok := r.Metadata["load_runner"].(string); ok {
			add(r, "load job", runner, true)
		}
		for node, facts := range metadataFacts(r) {
			_ = node // one node here; with several, every node's facts join the set
			for fact, v := range facts {
				add(r, "node "+fact, v, inherentFacts[fact])
			}
		}
		for _, e := range r.Endpoints {
			if e.Completed == 0 {
				continue
			}
			k := sizeKey{r.App, r.Variant, e.Name, r.Orchestrator}
			s := sizes[k]
			sizes[k] = [2]float64{s[0] + float64(e.BodyBytes), s[1] + float64(e.Completed)}
		}
	}
	var rows []ParityRow
	for k, byOrch := range values {
		if len(orchs[[2]string{k.app, k.variant}]) < 2 {
			continue
		}
		row := ParityRow{App: k.app, Variant: k.variant, Aspect: k.aspect, Values: map[string]string{}, Inherent: inherent[k]}
		for o := range orchs[[2]string{k.app, k.variant}] {
			row.Values[o] = joinSet(byOrch[o])
		}
		if strings.HasPrefix(k.aspect, "node ") && hasEmpty(row.Values) {
			// a fact one orchestrator does not report is not a difference of the machine
			row.Inherent = true
		}
		row.Mismatch = !row.Inherent && !allEqual(row.Values)
		rows = append(rows, row)
	}
	bodies := map[[3]string]map[string]float64{}
	for k, s := range sizes {
		id := [3]string{k.app, k.variant, k.endpoint}
		if bodies[id] == nil {
			bodies[id] = map[string]float64{}
		}
		bodies[id][k.orch] = s[0] / s[1]
	}
	for id, byOrch := range bodies {
		all := orchs[[2]string{id[0], id[1]}]
		if len(all) < 2 {
			continue
		}
		row := ParityRow{App: id[0], Variant: id[1], Aspect: "mean response body " + id[2], Values: map[string]string{}}
		lo, hi := math.Inf(1), math.Inf(-1)
		for o := range all {
			mean, ok := byOrch[o]
			if !ok {
				row.Values[o] = ""
				row.Mismatch = true
				continue
			}
			row.Values[o] = fmt.Sprintf("%.0f bytes", mean)
			lo, hi = math.Min(lo, mean), math.Max(hi, mean)
		}
		if hi > 0 && (hi-lo)/hi > responseTolerance {
			row.Mismatch = true
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.App != b.App || a.Variant != b.Variant {
			return a.App+"/"+a.Variant < b.App+"/"+b.Variant
		}
		return a.Aspect < b.Aspect
	})
	return rows
}

// ParityOrchestrators lists the orchestrators that appear in rows, sorted.
func ParityOrchestrators(rows []ParityRow) []string {
	seen := map[string]bool{}
	for _, r := range rows {
		for o := range r.Values {
			seen[o] = true
		}
	}
	var out []string
	for o := range seen {
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}

// Mismatches are the rows that break parity.
func Mismatches(rows []ParityRow) []ParityRow {
	var out []ParityRow
	for _, r := range rows {
		if r.Mismatch {
			out = append(out, r)
		}
	}
	return out
}

func metadataLimits(r StepResult) []parityLimits {
	var out []parityLimits
	remarshal(r.Metadata["limits"], &out)
	return out
}

func metadataFacts(r StepResult) map[string]map[string]string {
	var out map[string]map[string]string
	remarshal(r.Metadata["nodes"], &out)
	return out
}

// remarshal reads a metadata value, which is a typed value in the process
// that measured it and generic JSON once read back from the archive.
func remarshal(v any, into any) {
	if v == nil {
		return
	}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, into)
	}
}

func coresText(effective, quota float64) string {
	if quota == 0 {
		return fmt.Sprintf("no quota (%.3g", effective) + " available)"
	}
	return fmt.Sprintf("%.3f", quota)
}

func memText(mib int) string {
	if mib == 0 {
		return "no memory limit"
	}
	return fmt.Sprintf("%d MiB", mib)
}

func shortImage(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func joinSet(set map[string]bool) string {
	var vs []string
	for v := range set {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return strings.Join(vs, " | ")
}

func hasEmpty(values map[string]string) bool {
	for _, v := range values {
		if v == "" {
			return true
		}
	}
	return false
}

func allEqual(values map[string]string) bool {
	first, set := "", false
	for _, v := range values {
		if v == "" {
			return false
		}
		if !set {
			first, set = v, true
		} else if v != first {
			return false
		}
	}
	return true
}
