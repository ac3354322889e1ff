package report

import (
	"encoding/xml"
	"fmt"
	stdhtml "html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

// buildArchive writes a sweep of taewa × {baseline, vertical} × 3 rates × 2
// reps; baseline breaks its p99 SLO at 400 rps, one vertical step fails its
// limits gate.
func buildArchive(t *testing.T) (results.Archive, *results.SweepRecord) {
	t.Helper()
	a := results.Archive{Dir: filepath.Join(t.TempDir(), "results")}
	spec := &experiment.Sweep{
		Name: "rep", Description: "synthetic <sweep> & co", Seed: 5, Repetitions: 2,
		Deploy: experiment.DeployPerConfiguration, Duration: 8 * time.Second, Orchestrators: []string{"nomad"},
		SLO: experiment.SLO{P99Ms: 100, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01},
		Apps: []experiment.App{{Name: "taewa", Pack: "taewa", Variants: []string{"baseline", "vertical"},
			Rates: []float64{100, 200, 400}, Load: experiment.Load{Kind: experiment.LoadOpen, Threads: 1, Connections: 1}}},
	}
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := &results.SweepRecord{ID: results.NewSweepID("rep", start), Spec: spec, Seed: 5, Plan: experiment.Plan(spec), GitSHA: "deadbeef", Start: start,
		ToolVersions: map[string]string{"nomad": "1.10.0"}}
	if err := a.CreateSweep(*rec); err != nil {
		t.Fatal(err)
	}
	for i, st := range rec.Plan {
		p99 := st.OfferedRPS / 5
		if st.Variant == "baseline" && st.OfferedRPS == 400 {
			p99 = 180 + float64(st.Rep)
		}
		r := results.StepResult{
			Labels:      results.LabelsFor(rec.ID, st),
			Gates:       []results.Gate{{Name: "healthy", Passed: true}, {Name: "limits", Passed: true}, {Name: "probe", Passed: true}},
			AchievedRPS: st.OfferedRPS * 0.98, Requests: int64(st.OfferedRPS) * 8,
			Corrected: results.Latency{P50: p99 / 5, P75: p99 / 4, P90: p99 / 2, P99: p99, P999: p99 * 1.4, Max: p99 * 2},
			Spectrum: []results.SpectrumPoint{{Percentile: 0, ValueMs: 0.3}, {Percentile: 50, ValueMs: p99 / 5}, {Percentile: 90, ValueMs: p99 / 2},
				{Percentile: 99, ValueMs: p99}, {Percentile: 99.9, ValueMs: p99 * 1.4}, {Percentile: 99.99, ValueMs: p99 * 1.8}, {Percentile: 100, ValueMs: p99 * 2}},
			Start: start.Add(time.Duration(i) * 12 * time.Second), End: start.Add(time.Duration(i)*12*time.Second + 8*time.Second),
		}
		r.Metadata = map[string]any{"task_cpu": []results.TaskCPU{
			{Task: "taewa", Cores: 0.25 * st.OfferedRPS / 400, LimitCores: 0.25, Utilization: st.OfferedRPS / 400, ThrottledRatio: 0.1},
		}}
		if st.ID == "taewa-nomad-vertical-r200-rep2" {
			r.Gates[1] = results.Gate{Name: "limits", Passed: false, Detail: "enforced 2 cores, declared 0.25"}
		}
		if p99 > 100 {
			r.Gates = append(r.Gates, results.Gate{Name: "slo", Breaks: true, Detail: fmt.Sprintf("p99 %.1f ms > 100 ms", p99)})
		}
		r.Decide()
		if err := a.WriteStep(rec.ID, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	return a, rec
}

// countSeries parses an SVG as XML and counts <g class="series"> elements.
func countSeries(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	n := 0
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			for _, a := range se.Attr {
				if se.Name.Local == "g" && a.Name.Local == "class" && a.Value == "series" {
					n++
				}
			}
		}
	}
	if root != "svg" {
		t.Fatalf("%s root is %q", path, root)
	}
	return n
}

func TestWriteReport(t *testing.T) {
	a, rec := buildArchive(t)
	out := filepath.Join(t.TempDir(), "reports")
	index, err := Write(a, "rep", out) // by name: newest run
	if err != nil {
		t.Fatal(err)
	}
	if index != filepath.Join(out, rec.ID, "index.html") {
		t.Fatalf("index at %s", index)
	}
	page, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)

	// Every referenced SVG exists, and every SVG written is referenced.
	refs := map[string]bool{}
	for _, m := range regexp.MustCompile(`<img src="([^"]+\.svg)"`).FindAllStringSubmatch(html, -1) {
		refs[m[1]] = true
	}
	svgs, _ := filepath.Glob(filepath.Join(out, rec.ID, "*.svg"))
	var names []string
	for _, s := range svgs {
		names = append(names, filepath.Base(s))
		if !refs[filepath.Base(s)] {
			t.Errorf("%s written but not shown", filepath.Base(s))
		}
	}
	sort.Strings(names)
	want := []string{
		"cpu-per-request.svg", "latency-taewa-p50.svg", "latency-taewa-p90.svg", "latency-taewa-p99.svg", "latency-taewa-p999.svg",
		"spectrum-taewa-nomad-baseline.svg", "spectrum-taewa-nomad-vertical.svg", "throughput-taewa.svg",
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("svgs = %v, want %v", names, want)
	}
	if len(refs) != len(want) {
		t.Fatalf("page shows %d svgs: %v", len(refs), refs)
	}

	// Series: one per orchestrator × variant on load charts, one per step on spectra.
	dir := filepath.Join(out, rec.ID)
	for file, n := range map[string]int{
		"latency-taewa-p99.svg": 2, "latency-taewa-p50.svg": 2, "throughput-taewa.svg": 2,
		"spectrum-taewa-nomad-baseline.svg": 6, "spectrum-taewa-nomad-vertical.svg": 6,
	} {
		if got := countSeries(t, filepath.Join(dir, file)); got != n {
			t.Errorf("%s has %d series, want %d", file, got, n)
		}
	}
	p99, _ := os.ReadFile(filepath.Join(dir, "latency-taewa-p99.svg"))
	if !strings.Contains(string(p99), "SLO p99 100 ms") || !strings.Contains(string(p99), `class="ref"`) {
		t.Error("p99 chart lacks the SLO line")
	}
	thr, _ := os.ReadFile(filepath.Join(dir, "throughput-taewa.svg"))
	if !strings.Contains(string(thr), "achieved = offered") {
		t.Error("throughput chart lacks y = x")
	}
	spec, _ := os.ReadFile(filepath.Join(dir, "spectrum-taewa-nomad-baseline.svg"))
	for _, label := range []string{">0%<", ">90%<", ">99%<", ">99.9%<", ">99.99%<"} {
		if !strings.Contains(string(spec), label) {
			t.Errorf("spectrum lacks tick %s", label)
		}
	}
	if !strings.Contains(string(spec), "r400 rep2") {
		t.Error("spectrum legend lacks step names")
	}

	// Breaking point, invalid step and escaping.
	for _, w := range []string{
		"synthetic &lt;sweep&gt; &amp; co",
		"<td>taewa-nomad-baseline</td>\n<td>r400</td><td>p99</td>",
		"met the SLO up to r400",
		"<td>r200</td><td class=\"num\">40.0 (range 40.0–40.0, n=2, 50 %)</td>", // two repetitions: a range, and its coverage
		"enforced 2 cores, declared 0.25",
		"deadbeef",
		"<td>taewa-nomad-baseline</td><td>r400</td><td>taewa 100% of 0.25 cores, throttled in 10% of periods</td>",
		"200.0 (range 200.0–200.0, n=2, 50 %) (200 200)",
		"<th>rps per core of the measured service</th><th>rps per core of the application (all its tasks; datastores' share)</th>", // sustained per repetition: both broke at 400
	} {
		if !strings.Contains(html, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	invalidRow := regexp.MustCompile(`<tr class="invalid">\s*<td>taewa-nomad-vertical-r200-rep2</td><td>invalid</td>`)
	if !invalidRow.MatchString(html) {
		t.Error("invalid step not highlighted")
	}
	if n := strings.Count(html, `<tr class="invalid">`); n != 1 {
		t.Errorf("%d invalid rows, want 1", n)
	}
	brokenRow := regexp.MustCompile(`<tr class="broken">\s*<td>taewa-nomad-baseline-r400-rep1</td><td>broken</td>`)
	if !brokenRow.MatchString(html) {
		t.Error("broken step not shown as broken")
	}
}

func TestNiceTicksAndSpectrumLabels(t *testing.T) {
	ticks, lo, hi := niceTicks(0, 187)
	if lo != 0 || hi != 200 || len(ticks) != 5 || ticks[1].Label != "50" {
		t.Fatalf("ticks for 0..187 = %v [%g, %g]", ticks, lo, hi)
	}
	ticks, _, _ = niceTicks(0, 0.7)
	if ticks[1].Label != "0.2" || len(ticks) != 5 {
		t.Fatalf("ticks for 0..0.7 = %v", ticks)
	}
	for k, want := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		if got := spectrumLabel(k); got != want {
			t.Errorf("spectrumLabel(%d) = %s, want %s", k, got, want)
		}
	}
}

// A sweep over two orchestrators gets the parity table, and a limit that
// differs on one of them is flagged in it.
func TestReportParityTable(t *testing.T) {
	spec := &experiment.Sweep{Name: "cross", Repetitions: 1, Orchestrators: []string{"nomad", "swarm"},
		SLO: experiment.SLO{P99Ms: 100, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}}
	rec := &results.SweepRecord{ID: "cross-1", Spec: spec}
	step := func(orch string, quota float64) results.StepResult {
		r := results.StepResult{
			Labels: results.Labels{Sweep: "cross-1", Step: "taewa-" + orch + "-vertical-r100-rep1", App: "taewa", Orchestrator: orch, Variant: "vertical", OfferedRPS: 100, Rep: 1},
			Gates:  []results.Gate{{Name: "limits", Passed: true}}, AchievedRPS: 100,
			Endpoints: []results.EndpointStats{{Name: "GET /", Requests: 10, Completed: 10, BodyBytes: 440}},
			Metadata: map[string]any{"entry": "host-port", "limits": []any{map[string]any{"group": "taewa", "task": "taewa",
				"quota_cores": quota, "effective_cores": quota, "memory_limit_mib": 512}}},
		}
		r.Decide()
		return r
	}
	page, _ := Build(rec, []results.StepResult{step("nomad", 0.5), step("swarm", 0.5)})
	if !strings.Contains(string(page), `id="parity"`) || !strings.Contains(string(page), "No mismatch other than the orchestrator") {
		t.Fatal("no parity table, or a mismatch, for equal runs")
	}
	page, _ = Build(rec, []results.StepResult{step("nomad", 0.5), step("swarm", 1)})
	if !strings.Contains(string(page), "1 mismatch(es) other than the orchestrator") || !strings.Contains(string(page), "MISMATCH") {
		t.Fatal("a CPU limit differing between orchestrators is not flagged")
	}
	page, _ = Build(rec, []results.StepResult{step("nomad", 0.5)})
	if strings.Contains(string(page), `id="parity"`) {
		t.Fatal("a parity table for one orchestrator")
	}
}

func TestReportListsFaultsAndTaskEvents(t *testing.T) {
	spec := &experiment.Sweep{Name: "ev", Repetitions: 1, Orchestrators: []string{"nomad"}}
	rec := &results.SweepRecord{ID: "ev-1", Spec: spec}
	quiet := results.StepResult{Labels: results.Labels{Sweep: "ev-1", Step: "quiet", App: "taewa", Orchestrator: "nomad", OfferedRPS: 10, Rep: 1}, Metadata: map[string]any{}}
	recovery := 3.6
	// as read back from an archive: JSON trees, not the typed values
	oom := results.StepResult{Labels: results.Labels{Sweep: "ev-1", Step: "oom", App: "taewa", Orchestrator: "nomad", OfferedRPS: 20, Rep: 1},
		Metadata: map[string]any{
			"task_events": []any{map[string]any{"kind": "oom-killed", "group": "ferretdb", "task": "ferretdb", "instance": "f1", "seconds": 12.3, "cause": results.CauseUnplanned}},
			"fault":       map[string]any{"kind": "kill-task", "service": "sn-redis", "seconds": 4.0, "hit": map[string]any{"group": "redis"}, "recovery_seconds": recovery},
		}}
	page, _ := Build(rec, []results.StepResult{quiet, oom})
	all := stdhtml.UnescapeString(string(page))
	i := strings.Index(all, `id="disruptions"`)
	if i < 0 {
		t.Fatal("no table of faults and task events")
	}
	html := all[i : i+strings.Index(all[i:], "</table>")]
	for _, want := range []string{`id="disruptions"`, "ferretdb/ferretdb oom-killed at +12.3 s", "(not injected)", "kill-task on sn-redis at 4.0 s; redis started again 3.6 s after the fault"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	if strings.Contains(html, "<td>quiet</td>") || !strings.Contains(html, "<td>oom</td>") {
		t.Error("a step without events is listed")
	}
	if page, _ := Build(rec, []results.StepResult{quiet}); strings.Contains(string(page), `id="disruptions"`) {
		t.Error("a disruptions table without any disruption")
	}
}

func TestReportShowsTheStudyHeadline(t *testing.T) {
	spec := &experiment.Sweep{Name: "s0", Study: "000", Repetitions: 1, Orchestrators: []string{"nomad"}}
	rec := &results.SweepRecord{ID: "s0-1", Spec: spec}
	var steps []results.StepResult
	for _, driver := range []string{"docker", "exec"} {
		id := "raupi-" + driver
		rec.Plan = append(rec.Plan, experiment.Step{ID: id, App: "raupi-" + driver, Pack: "raupi", Orchestrator: "nomad", Variant: "baseline",
			Vars: map[string]any{"driver": driver, "difficulty": 200.0}, Rep: 1})
		steps = append(steps, results.StepResult{Labels: results.Labels{Sweep: "s0-1", Step: id, App: "raupi-" + driver, Orchestrator: "nomad", Users: 20, Rep: 1},
			Outcome: results.OutcomeValid, AchievedRPS: map[string]float64{"docker": 300, "exec": 200}[driver],
			Metadata: map[string]any{"task_cpu": []results.TaskCPU{{Task: "raupi", Cores: 1}}}})
	}
	page, _ := Build(rec, steps)
	html := stdhtml.UnescapeString(string(page))
	i := strings.Index(html, `id="study-000"`)
	if i < 0 {
		t.Fatal("no study table")
	}
	table := html[i : i+strings.Index(html[i:], "</table>")]
	for _, want := range []string{"<td>raupi</td>", "<td>n=200</td>", "<td>1.500 (n=1)</td>", "<td>1.731 / 1.602</td>"} {
		if !strings.Contains(table, want) {
			t.Errorf("the study table does not say %q:\n%s", want, table)
		}
	}
	rec.Spec = &experiment.Sweep{Name: "plain"}
	if page, _ := Build(rec, steps); strings.Contains(string(page), `id="study-`) {
		t.Error("a study table for a sweep that names none")
	}
}
