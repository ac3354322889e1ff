package report

import (
	"bytes"
	"fmt"
	"math"
	"sort"

	"github.com/orchbench/orchbench/harness/results"
)

// scalingFile is the autoscaling chart's file beside index.html.
const scalingFile = "scaling.svg"

// scalingSVG draws every scaling step on one time axis, from the start of
// its load: the p99 of each second (solid, left axis, ms) and the instances
// serving (stepped and dashed, right axis), one colour per configuration,
// with the step up and the SLO marked. Invalid steps are left out: they
// did not measure the autoscaler they declared.
func scalingSVG(steps []results.StepResult, sloMs float64) []byte {
	var shown []results.StepResult
	configs := map[string]int{}
	var names []string
	for _, s := range steps {
		if s.Scaling == nil || s.Outcome == results.OutcomeInvalid {
			continue
		}
		shown = append(shown, s)
		if _, ok := configs[s.Configuration()]; !ok {
			configs[s.Configuration()] = 0
			names = append(names, s.Configuration())
		}
	}
	sort.Strings(names)
	for i, n := range names {
		configs[n] = i
	}
	tmax, pmax, nmax, stepUp := 1.0, math.Max(sloMs*1.15, 1), 1, 0.0
	for _, s := range shown {
		stepUp = s.Scaling.StepUpSeconds
		for _, p := range s.Series {
			tmax, pmax = math.Max(tmax, p.T+1), math.Max(pmax, p.P99Ms)
		}
		for _, p := range s.Scaling.Timeline {
			tmax = math.Max(tmax, p.T)
			nmax = max(nmax, p.Serving, p.Desired)
		}
	}
	tticks, _, thi := niceTicks(0, tmax)
	pticks, _, phi := niceTicks(0, pmax)
	const left, top, w, h = 70, 40, 560, 300
	x := func(t float64) float64 { return left + w*t/thi }
	yp := func(ms float64) float64 { return top + h - h*ms/phi }
	yn := func(n int) float64 { return top + h - h*float64(n)/float64(nmax+1) }
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`, 980, top+h+60)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">Instances serving (dashed, right axis) and p99 of each second (solid, left axis) from the start of the load</text>`, left)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`, left, top, w, h)
	for _, t := range tticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`, x(t.V), top, x(t.V), top+h, x(t.V), top+h+16, esc(t.Label))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">seconds from the start of the load</text>`, left+w/2, top+h+36)
	for _, t := range pticks {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, yp(t.V)+4, esc(t.Label))
	}
	fmt.Fprintf(&b, `<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">p99 (ms)</text>`, top+h/2, top+h/2)
	for n := 0; n <= nmax; n++ {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f">%d</text>`, left+w+6, yn(n)+4, n)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" transform="rotate(90 %d %d)" text-anchor="middle">instances serving</text>`, left+w+30, top+h/2, left+w+30, top+h/2)
	if sloMs > 0 {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#b00" stroke-dasharray="2,3"/><text x="%d" y="%.1f" fill="#b00">SLO p99 %s ms</text>`, left, yp(sloMs), left+w, yp(sloMs), left+4, yp(sloMs)-4, fmtNum(sloMs))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555" stroke-dasharray="6,3"/><text x="%.1f" y="%d">step up</text>`, x(stepUp), top, x(stepUp), top+h, x(stepUp)+4, top+12)
	for _, s := range shown {
		colour := palette[configs[s.Configuration()]%len(palette)]
		var line bytes.Buffer
		for i, p := range s.Series {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&line, "%s%.1f,%.1f ", cmd, x(p.T), yp(p.P99Ms))
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.2" opacity="0.8"><title>%s p99</title></path>`, line.String(), colour, esc(s.Step))
		var steps bytes.Buffer
		for i, p := range s.Scaling.Timeline {
			if i == 0 {
				fmt.Fprintf(&steps, "M%.1f,%.1f ", x(max(p.T, 0)), yn(p.Serving))
				continue
			}
			fmt.Fprintf(&steps, "H%.1f V%.1f ", x(max(p.T, 0)), yn(p.Serving))
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2.2" stroke-dasharray="7,3"><title>%s instances serving</title></path>`, steps.String(), colour, esc(s.Step))
	}
	for i, n := range names {
		y := top + 10 + i*18
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/><text x="%d" y="%d">%s</text>`, left+w+60, y, left+w+84, y, palette[i%len(palette)], left+w+90, y+4, esc(n))
	}
	b.WriteString(`</svg>`)
	return b.Bytes()
}

// scalingSection is the "Autoscaling" part of the page.
const scalingSection = `{{if .Scaling}}<h2>Autoscaling</h2>
<p>Per configuration, over its scaling steps' repetitions (invalid ones left out and named), times in seconds from the step up of the load, ` + results.IntervalLegend + `. <em>First decision</em>: the autoscaler's first scale-out. <em>Scaled out</em>: the most instances that served at once were all serving (passing their health check, which is what the entry routes to). <em>SLO again</em>: from when every second's p99, errors and throughput stayed within the SLO to the end of the load. <em>Errors meanwhile</em>: what users saw from the step up until then (until the end for a repetition that never got back).</p>
<table id="scaling">
<tr><th>configuration</th><th>scaler</th><th>policy</th><th>steps</th><th>first decision</th><th>scaled out</th><th>instances at most</th><th>SLO again</th><th>errors meanwhile</th><th>missing</th></tr>
{{range .Scaling}}<tr{{if .NotRecovered}} class="broken"{{end}}>
<td>{{.Configuration}}</td><td>{{.Scaler}}</td><td>{{.Policy}}</td><td class="num">{{len .Steps}}{{if .Invalid}} (+{{.Invalid}} invalid){{end}}</td>
<td class="num">{{.FirstDecision}}</td><td class="num">{{.ScaleOut}}</td><td class="num">{{.Peak}}</td><td class="num">{{.Recovery}}</td><td class="num">{{.ErrorsText}}</td>
<td>{{.MissingText}}{{range .InvalidWhy}}<br><strong>invalid</strong>: {{.}}{{end}}</td>
</tr>
{{end}}</table>
<figure><a href="` + scalingFile + `"><img src="` + scalingFile + `" alt="instances and p99 over time per configuration"></a><figcaption>One colour per configuration, one pair of lines per repetition: the p99 of each second (solid) and the instances serving (dashed, right axis).</figcaption></figure>
{{end}}
`
