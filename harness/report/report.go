// Package report turns an archived sweep into a static HTML page with SVG
// charts: latency and throughput against offered load, percentile spectra,
// breaking points with intervals and their coverage, and every verification
// gate.
// It reads only the archive, so a report can be rebuilt at any time.
package report

import (
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/studies"
)

// Write renders the report of sweep (ID or name) from the archive into
// outDir/<sweep-id>/index.html plus its SVG files, and returns the page path.
func Write(a results.Archive, sweep, outDir string) (string, error) {
	id, err := a.Resolve(sweep)
	if err != nil {
		return "", err
	}
	rec, err := a.LoadSweep(id)
	if err != nil {
		return "", err
	}
	steps, err := a.LoadSteps(id)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(outDir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	page, files := Build(rec, steps)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	index := filepath.Join(dir, "index.html")
	return index, os.WriteFile(index, page, 0o644)
}

// Figure is one SVG of the page.
type Figure struct {
	File    string
	Caption string
}

// Section groups the figures of one app or configuration.
type Section struct {
	Title   string
	Figures []Figure
}

// DisruptionRow is a step during whose load a fault was injected or a task
// started, stopped or died.
type DisruptionRow struct {
	Step    string
	Outcome results.Outcome
	Fault   string
	Events  []results.StepEvent
}

func disruptions(steps []results.StepResult) []DisruptionRow {
	var rows []DisruptionRow
	for _, s := range steps {
		events, fault := results.EventsOf(s)
		if len(events) == 0 && fault == nil {
			continue
		}
		row := DisruptionRow{Step: s.Step, Outcome: s.Outcome, Events: events}
		if fault != nil {
			row.Fault = fmt.Sprintf("%s on %s at %.1f s; %s", fault.Kind, fault.Service, fault.Seconds, fault.Recovery())
			if fault.Node != nil && fault.Error == "" {
				row.Fault = fmt.Sprintf("%s at %.1f s; %s", fault.Kind, fault.Seconds, fault.NodeRecovery())
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// GateRow is one step in the gates table.
type GateRow struct {
	Step    string
	Outcome results.Outcome
	Skipped bool
	Gates   []results.Gate
	Reasons string
}

type pageData struct {
	Rec       *results.SweepRecord
	Spec      *experiment.Sweep
	Generated string
	Done      int
	Invalid   int
	Broken    int
	Load      []Section
	Spectra   []Section
	Breaking  []results.BreakingPoint
	TaskCPU   []results.TaskCPULevel
	// RequestCPU is each task's CPU per request, drawn in cpu-per-request.svg.
	RequestCPU []results.RequestCPU
	Levels     []results.LevelStats
	// Parity compares what each orchestrator ran, when more than one ran.
	Parity              []results.ParityRow
	ParityMismatches    []results.ParityRow
	ParityOrchestrators []string
	// Faults compares recovery per orchestrator, shape and fault kind.
	Faults []results.FaultRecoveryRow
	// Scaling compares the autoscalers of scaling steps.
	Scaling []results.ScalingRow
	// Disruptions lists the steps with a fault or a task event.
	Disruptions []DisruptionRow
	GateNames   []string
	Gates       []GateRow
	// Shipping is the node agent's cost and the log links, per step.
	Shipping        []ShippingRow
	ShippingSummary *ShippingSummary
	ToolVersion     []string
	// Study is the headline table of the study the spec names, or nil.
	Study *studies.Table
}

// Build renders the page and its SVG files (by file name) in memory.
func Build(rec *results.SweepRecord, steps []results.StepResult) ([]byte, map[string][]byte) {
	spec := rec.Spec
	if spec == nil {
		spec = &experiment.Sweep{Name: rec.ID}
	}
	levels := results.Summarize(steps, spec.SLO)
	files := map[string][]byte{}
	d := pageData{
		Rec: rec, Spec: spec, Done: len(steps), Levels: levels,
		Breaking:   results.WithSustained(results.BreakingPoints(levels), steps, spec.SLO),
		TaskCPU:    results.SummarizeTaskCPU(steps),
		RequestCPU: results.CPUPerRequest(steps),
		Generated:  time.Now().UTC().Format("2006-01-02 15:04:05Z"),
	}
	if len(d.RequestCPU) > 0 {
		files[cpuPerRequestFile] = cpuPerRequestSVG(d.RequestCPU)
	}
	d.Disruptions = disruptions(steps)
	d.Faults = results.FaultsAndRecovery(rec.Plan, steps)
	if len(d.Faults) > 0 {
		files[faultRecoveryFile] = faultRecoverySVG(d.Faults)
	}
	d.Scaling = results.ScalingRows(steps)
	if len(d.Scaling) > 0 {
		files[scalingFile] = scalingSVG(steps, spec.SLO.P99Ms)
	}
	d.Shipping, d.ShippingSummary = shippingRows(steps)
	d.Study = studies.Headline(rec, steps)
	d.Parity = results.Parity(steps)
	d.ParityMismatches = results.Mismatches(d.Parity)
	d.ParityOrchestrators = results.ParityOrchestrators(d.Parity)
	for _, k := range slices.Sorted(maps.Keys(rec.ToolVersions)) {
		d.ToolVersion = append(d.ToolVersion, k+" "+rec.ToolVersions[k])
	}

	// Load curves, one section per app.
	for _, app := range appsOf(levels) {
		sec := Section{Title: app}
		for _, f := range loadFigures(app, levels, spec.SLO) {
			files[f.file] = f.chart.SVG()
			sec.Figures = append(sec.Figures, Figure{File: f.file, Caption: f.caption})
		}
		d.Load = append(d.Load, sec)
	}

	// Percentile spectra, one chart per configuration.
	byConfig := map[string][]results.StepResult{}
	var configs []string
	for _, r := range steps {
		c := r.Configuration()
		if _, ok := byConfig[c]; !ok {
			configs = append(configs, c)
		}
		byConfig[c] = append(byConfig[c], r)
	}
	sort.Strings(configs)
	for _, c := range configs {
		file := "spectrum-" + c + ".svg"
		files[file] = spectrumChart(c, byConfig[c]).SVG()
		d.Spectra = append(d.Spectra, Section{Title: c, Figures: []Figure{{File: file, Caption: "Corrected latency by percentile, one line per step (invalid steps dashed)."}}})
	}

	// Gates: the union of gate names as columns, steps in plan order.
	seen := map[string]bool{}
	for _, r := range steps {
		for _, g := range r.Gates {
			if !seen[g.Name] {
				seen[g.Name] = true
				d.GateNames = append(d.GateNames, g.Name)
			}
		}
		switch {
		case r.Outcome == results.OutcomeInvalid:
			d.Invalid++
		case r.Outcome == results.OutcomeBroken && !r.Skipped:
			d.Broken++
		}
		d.Gates = append(d.Gates, GateRow{Step: r.Step, Outcome: r.Outcome, Skipped: r.Skipped, Gates: r.Gates, Reasons: strings.Join(r.Reasons, "; ")})
	}

	var b strings.Builder
	if err := pageTemplate.Execute(&b, d); err != nil {
		// The template is fixed and the data plain; failing here is a bug.
		panic(err)
	}
	return []byte(b.String()), files
}

type figure struct {
	file    string
	caption string
	chart   Chart
}

// loadFigures draws an app's latency percentiles and achieved throughput
// against its load level, one series per orchestrator × variant.
func loadFigures(app string, levels []results.LevelStats, slo experiment.SLO) []figure {
	var mine []results.LevelStats
	closed := false
	for _, l := range levels {
		if l.App == app && l.Measured > 0 {
			mine = append(mine, l)
			closed = closed || l.Users > 0
		}
	}
	xLabel, xOf := "offered load (requests/s)", func(l results.LevelStats) float64 { return l.OfferedRPS }
	if closed {
		xLabel, xOf = "users (closed loop)", func(l results.LevelStats) float64 { return float64(l.Users) }
	}
	seriesOf := func(get func(results.LevelStats) results.Estimate) []Series {
		var out []Series
		idx := map[string]int{}
		for _, l := range mine {
			name := l.Orchestrator + " / " + l.Variant
			i, ok := idx[name]
			if !ok {
				i = len(out)
				idx[name] = i
				out = append(out, Series{Name: name})
			}
			e := get(l)
			out[i].Points = append(out[i].Points, Point{X: xOf(l), Y: e.Median, YLo: e.Lo, YHi: e.Hi, HasCI: e.N > 1})
		}
		return out
	}
	pcts := []struct {
		key, label string
		get        func(results.LevelStats) results.Estimate
	}{
		{"p50", "p50", func(l results.LevelStats) results.Estimate { return l.P50 }},
		{"p90", "p90", func(l results.LevelStats) results.Estimate { return l.P90 }},
		{"p99", "p99", func(l results.LevelStats) results.Estimate { return l.P99 }},
		{"p999", "p99.9", func(l results.LevelStats) results.Estimate { return l.P999 }},
	}
	var out []figure
	for _, p := range pcts {
		c := Chart{
			Title:  fmt.Sprintf("%s: %s latency (corrected)", app, p.label),
			XLabel: xLabel, YLabel: p.label + " latency (ms)",
			Series: seriesOf(p.get),
		}
		if p.key == "p99" && slo.P99Ms > 0 {
			c.Refs = []RefLine{{Y: slo.P99Ms, Label: fmt.Sprintf("SLO p99 %g ms", slo.P99Ms)}}
		}
		out = append(out, figure{
			file:    fmt.Sprintf("latency-%s-%s.svg", app, p.key),
			caption: fmt.Sprintf("Median %s over measured repetitions; bars are the exact interval of the median from 6 repetitions, the observed range with fewer (coverage in the table of statistics per load level).", p.label),
			chart:   c,
		})
	}
	tc := Chart{
		Title:  app + ": achieved throughput",
		XLabel: xLabel, YLabel: "achieved (requests/s)",
		Series:   seriesOf(func(l results.LevelStats) results.Estimate { return l.Achieved }),
		Diagonal: !closed,
	}
	out = append(out, figure{
		file:    "throughput-" + app + ".svg",
		caption: "Median achieved throughput; on the dashed line every offered request was served.",
		chart:   tc,
	})
	return out
}

// spectrumChart plots each step's percentile spectrum on hdr-plot's x axis:
// log10(1/(1-p)), so 90 %, 99 %, 99.9 % are evenly spaced.
func spectrumChart(config string, steps []results.StepResult) Chart {
	sort.Slice(steps, func(i, j int) bool {
		a, b := steps[i], steps[j]
		if a.OfferedRPS != b.OfferedRPS || a.Users != b.Users {
			return a.OfferedRPS < b.OfferedRPS || (a.OfferedRPS == b.OfferedRPS && a.Users < b.Users)
		}
		return a.Rep < b.Rep
	})
	maxX := 2.0
	var series []Series
	for _, r := range steps {
		name := experiment.Step{OfferedRPS: r.OfferedRPS, Users: r.Users}.Level() + " rep" + fmt.Sprint(r.Rep)
		if !r.Measured() {
			name += " (" + string(r.Outcome) + ")"
		} else if r.Outcome == results.OutcomeBroken {
			name += " (broken)"
		}
		s := Series{Name: name, Dashed: !r.Measured()}
		for _, p := range r.Spectrum {
			if p.Percentile >= 100 || p.Percentile < 0 {
				continue // the maximum sits at infinity on this axis
			}
			x := math.Log10(100 / (100 - p.Percentile))
			maxX = math.Max(maxX, x)
			s.Points = append(s.Points, Point{X: x, Y: p.ValueMs})
		}
		series = append(series, s)
	}
	n := int(math.Min(math.Ceil(maxX-1e-9), 6))
	ticks := make([]Tick, 0, n+1)
	for k := 0; k <= n; k++ {
		ticks = append(ticks, Tick{V: float64(k), Label: spectrumLabel(k)})
	}
	return Chart{
		Title:  config + ": latency by percentile",
		XLabel: "percentile", YLabel: "corrected latency (ms)",
		Series: series, XTicks: ticks,
	}
}

// spectrumLabel names the tick at log10(1/(1-p)) = k: 0%, 90%, 99%, 99.9%...
func spectrumLabel(k int) string {
	if k == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.*f%%", max(k-2, 0), 100-100/math.Pow(10, float64(k)))
}

func appsOf(levels []results.LevelStats) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range levels {
		if !seen[l.App] {
			seen[l.App] = true
			out = append(out, l.App)
		}
	}
	return out
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"gate": func(gates []results.Gate, name string) *results.Gate {
		for i := range gates {
			if gates[i].Name == name {
				return &gates[i]
			}
		}
		return nil
	},
	"pct":  func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"rate": experiment.FormatRate,
	"join": strings.Join,
	"add":  func(a, b int) int { return a + b },
}).Parse(pageHTML))
