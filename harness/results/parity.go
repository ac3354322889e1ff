package results

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/orchbench/orchbench/harness/contract"
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
	// Basis says which steps a response size was averaged over.
	Basis string `json:"basis,omitempty"`
}

// responseTolerance is how far mean response sizes may differ between
// orchestrators before they are flagged: generated content (timelines with
// random text) varies a little from run to run, an empty answer does not.
const responseTolerance = 0.05

// inherentFacts are node facts that differ by orchestrator by nature.
var inherentFacts = map[string]bool{"nomad.version": true, "swarm.version": true, "kubernetes.version": true,
	"container.runtime": true, "cpu.totalcompute": true}

// nativeEntries is how each orchestrator publishes a service on its node
// (orchestrator.EntryKind values): a host port mapped by a kernel NAT rule
// on Nomad and Swarm, a NodePort (kube-proxy's NAT rules) on Kubernetes.
// Entries that differ only so differ by nature; any other entry is flagged.
var nativeEntries = map[string]string{"nomad": "host-port", "swarm": "host-port", "kubernetes": "node-port"}

// parityLimits is the part of an archived limits record parity reads.
type parityLimits struct {
	Group          string  `json:"group"`
	Task           string  `json:"task"`
	Node           string  `json:"node"`
	EffectiveCores float64 `json:"effective_cores"`
	QuotaCores     float64 `json:"quota_cores"`
	MemoryLimitMiB int     `json:"memory_limit_mib"`
	ImageID        string  `json:"image_id"`
	CgroupVersion  int     `json:"cgroup_version"`
	CPUWeight      int64   `json:"cpu_weight"`
	CPUSetSize     int     `json:"cpuset_size"`
	// SwapAccounted is nil in steps archived before the swap was read.
	SwapAccounted  *bool         `json:"swap_accounted"`
	SwapLimitBytes int64         `json:"swap_limit_bytes"`
	Declared       contract.Task `json:"declared"`
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
	sizes := responseSizes(steps)
	for _, r := range steps {
		if r.Skipped || !r.Measured() {
			continue
		}
		cfg := [2]string{r.App, r.Variant}
		if orchs[cfg] == nil {
			orchs[cfg] = map[string]bool{}
		}
		orchs[cfg][r.Orchestrator] = true
		lims := metadataLimits(r)
		counts := instanceCounts(lims)
		scale := weightScale(lims)
		if scale > 0 {
			// each orchestrator counts weight in its own unit; only the
			// proportion among the tasks is compared (policyText)
			add(r, "cpu weight per declared core", fmt.Sprintf("%.0f", scale), true)
		}
		for name, where := range placementCounts(lims) {
			add(r, "placement "+name, where, false)
		}
		for _, l := range lims {
			name := l.Group + "/" + l.Task
			add(r, "limits "+name, coresText(l.EffectiveCores, l.QuotaCores)+", "+memText(l.MemoryLimitMiB)+", "+counts[name], false)
			if policy := policyText(l, scale); policy != "" {
				add(r, "limits "+name+" policy", policy, false)
			}
			if l.ImageID != "" {
				add(r, "image "+name, shortImage(l.ImageID), false)
			}
		}
		if shipped, ok := shippingText(r); ok {
			add(r, "log shipping", shipped, false)
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
		if k.aspect == "entry" && allNative(row.Values) {
			row.Inherent = true
		}
		if strings.HasPrefix(k.aspect, "node ") && hasEmpty(row.Values) {
			// a fact one orchestrator does not report is not a difference of the machine
			row.Inherent = true
		}
		row.Mismatch = !row.Inherent && !allEqual(row.Values)
		rows = append(rows, row)
	}
	for id, size := range sizes {
		all := orchs[[2]string{id.app, id.variant}]
		if len(all) < 2 {
			continue
		}
		row := ParityRow{App: id.app, Variant: id.variant, Aspect: "mean response body " + id.endpoint, Values: map[string]string{}, Basis: size.basis}
		lo, hi := math.Inf(1), math.Inf(-1)
		for o := range all {
			mean, ok := size.mean[o]
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
	rows = append(rows, spreadRows(steps, orchs)...)
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.App != b.App || a.Variant != b.Variant {
			return a.App+"/"+a.Variant < b.App+"/"+b.Variant
		}
		return a.Aspect < b.Aspect
	})
	return rows
}

type endpointID struct{ app, variant, endpoint string }

type meanSize struct {
	mean  map[string]float64 // orchestrator → mean body bytes
	basis string
}

// responseSizes averages each endpoint's body size per orchestrator over
// the steps that were valid on every orchestrator that ran the variant.
// An overloaded (broken) step completes a different subset of its requests
// on each run, and a stateful application's reads then return different
// amounts: comparing those would flag the overload, not the orchestrator.
// Where no step was valid everywhere, every measured step counts, so a
// difference is still flagged rather than hidden.
func responseSizes(steps []StepResult) map[endpointID]meanSize {
	type stepKey struct {
		app, variant string
		rate         float64
		users, rep   int
	}
	keyOf := func(r StepResult) stepKey {
		return stepKey{r.App, r.Variant, r.OfferedRPS, r.Users, r.Rep}
	}
	ran := map[[2]string]map[string]bool{}
	valid := map[stepKey]map[string]bool{}
	for _, r := range steps {
		if r.Skipped || !r.Measured() {
			continue
		}
		cfg := [2]string{r.App, r.Variant}
		if ran[cfg] == nil {
			ran[cfg] = map[string]bool{}
		}
		ran[cfg][r.Orchestrator] = true
		if r.Outcome == OutcomeValid {
			if valid[keyOf(r)] == nil {
				valid[keyOf(r)] = map[string]bool{}
			}
			valid[keyOf(r)][r.Orchestrator] = true
		}
	}
	validEverywhere := func(r StepResult) bool {
		return r.Outcome == OutcomeValid && len(valid[keyOf(r)]) == len(ran[[2]string{r.App, r.Variant}])
	}
	type sums struct{ bytes, completed float64 }
	collect := func(only bool) (map[endpointID]map[string]sums, map[endpointID]map[stepKey]bool) {
		out, stepsOf := map[endpointID]map[string]sums{}, map[endpointID]map[stepKey]bool{}
		for _, r := range steps {
			if r.Skipped || !r.Measured() || (only && !validEverywhere(r)) {
				continue
			}
			for _, e := range r.Endpoints {
				if e.Completed == 0 {
					continue
				}
				id := endpointID{r.App, r.Variant, e.Name}
				if out[id] == nil {
					out[id], stepsOf[id] = map[string]sums{}, map[stepKey]bool{}
				}
				s := out[id][r.Orchestrator]
				out[id][r.Orchestrator] = sums{s.bytes + float64(e.BodyBytes), s.completed + float64(e.Completed)}
				stepsOf[id][keyOf(r)] = true
			}
		}
		return out, stepsOf
	}
	common, commonSteps := collect(true)
	every, _ := collect(false)
	result := map[endpointID]meanSize{}
	for id, byOrch := range every {
		size := meanSize{mean: map[string]float64{}, basis: "every measured step (none was valid on every orchestrator)"}
		if c, ok := common[id]; ok && len(c) == len(ran[[2]string{id.app, id.variant}]) {
			byOrch = c
			size.basis = fmt.Sprintf("the %d steps valid on every orchestrator", len(commonSteps[id]))
		}
		for o, s := range byOrch {
			size.mean[o] = s.bytes / s.completed
		}
		result[id] = size
	}
	return result
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
		return fmt.Sprintf("no CPU quota (%.3g cores available)", effective)
	}
	return fmt.Sprintf("%.3f cores", quota)
}

func memText(mib int) string {
	if mib == 0 {
		return "no memory limit"
	}
	return fmt.Sprintf("%d MiB", mib)
}

// shortImage is an image's digest cut to 12 digits: a repository digest
// ("repo@sha256:…") by its digest, an image ID by itself.
func shortImage(id string) string {
	if _, digest, ok := strings.Cut(id, "@"); ok {
		id = digest
	}
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

// allNative: every orchestrator's entry is its own kind.
func allNative(values map[string]string) bool {
	for o, v := range values {
		if v == "" || nativeEntries[o] != v {
			return false
		}
	}
	return true
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
