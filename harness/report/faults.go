package report

import (
	"bytes"
	"fmt"

	"github.com/orchbench/orchbench/harness/results"
)

// faultRecoveryFile is the recovery chart's file beside index.html.
const faultRecoveryFile = "fault-recovery.svg"

// faultRecoverySVG draws, per orchestrator × shape × fault kind, one dot per
// repetition at its recovery time, the median as a bar across them, and a
// cross at the right edge for each repetition that did not recover before
// its step ended, so a missing recovery is seen rather than left out.
func faultRecoverySVG(rows []results.FaultRecoveryRow) []byte {
	maxS := 1.0
	longest := 0
	for _, r := range rows {
		for _, s := range r.RecoverySeconds {
			maxS = max(maxS, s)
		}
		longest = max(longest, len(rowLabel(r)))
	}
	ticks, _, hi := niceTicks(0, maxS)
	const top, rowH, plotW, charPx, crossGap = 40, 26, 460, 7, 40
	left := 10 + longest*charPx
	w := left + plotW + crossGap + 150
	h := top + len(rows)*rowH + 50
	sx := func(v float64) float64 { return float64(left) + v/hi*plotW }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">Recovery after a fault, per orchestrator and control-plane shape</text>`+"\n", 10)
	bottom := top + len(rows)*rowH
	for _, t := range ticks {
		if t.V > hi {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>`+"\n", sx(t.V), top, sx(t.V), bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", sx(t.V), bottom+16, esc(t.Label))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">seconds from the injection until every instance ran healthy again</text>`+"\n", left+plotW/2, bottom+36)
	crossX := float64(left + plotW + crossGap/2)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">never</text>`+"\n", crossX, bottom+16)
	for i, r := range rows {
		y := float64(top + i*rowH + rowH/2)
		colour := palette[i%len(palette)]
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y+4, esc(rowLabel(r)))
		for _, s := range r.RecoverySeconds {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" fill-opacity="0.7"/>`+"\n", sx(s), y, colour)
		}
		if r.Recovery.N > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-width="2"/>`+"\n", sx(r.Recovery.Median), y-8, sx(r.Recovery.Median), y+8)
		}
		for k := range r.Unrecovered {
			x := crossX + float64(k*9) - float64(len(r.Unrecovered)-1)*4.5
			fmt.Fprintf(&b, `<path d="M%.1f %.1fl8 8m0 -8l-8 8" stroke="#b00" stroke-width="2"/>`+"\n", x-4, y-4)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="#555">%d of %d recovered</text>`+"\n", left+plotW+crossGap+6, y+4, r.Recovery.N, len(r.Steps)-len(r.NotInjected))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// rowLabel names a row of the chart.
func rowLabel(r results.FaultRecoveryRow) string {
	shape := "ha " + r.Shape
	if r.Shape == "" {
		shape = "ha not declared"
	}
	return fmt.Sprintf("%s, %s: %s", r.Orchestrator, shape, r.Kind)
}

// faultsSection is the "Faults and recovery" part of the page.
const faultsSection = `{{if .Faults}}<h2>Faults and recovery</h2>
<p>Per orchestrator, control-plane shape (the steps' <code>ha</code>) and fault kind, over the repetitions that injected it (invalid steps left out and counted). <em>Recovery</em>: from the injection until every instance ran healthy again on the nodes still up (instance kinds: until the hit task started again), ` + results.IntervalLegend + `; a repetition that did not recover before its step ended is named with what was missing. <em>Errors</em> are the load's, summed over the repetitions: while the fault lasted (until recovery, or the end) and after it; after a node's loss the load keeps aiming at the addresses it started with, so errors after are the fixed targets' (docs/faults.md). <em>Leader again</em> and <em>job placed</em> (kill-leader): when the orchestrator had a leader again, and when a job submitted right after the kill was placed. <em>Writes lost</em>: the dataset verified after each step.</p>
<table id="faults-recovery">
<tr><th>orchestrator</th><th>shape</th><th>fault</th><th>steps</th><th>recovery</th><th>errors during</th><th>errors after</th><th>timeouts</th><th>leader again</th><th>job placed after the kill</th><th>writes lost</th></tr>
{{range .Faults}}<tr{{if .Unrecovered}} class="broken"{{end}}>
<td>{{.Orchestrator}}</td><td>{{.ShapeText}}</td><td>{{.Kind}}</td><td class="num">{{len .Steps}}{{if .Invalid}} (+{{.Invalid}} invalid){{end}}</td>
<td>{{.RecoveryText}}{{range .NotInjected}}<br><strong>not injected</strong>: {{.}}{{end}}</td>
<td class="num">{{.During}}</td><td class="num">{{.After}}</td><td class="num">{{.Timeouts}}</td>
<td>{{.LeaderText}}</td><td>{{.SchedulingText}}{{range .HarnessCutOff}}<br><strong>the harness's own API was on the node hit</strong> ({{.}}): its figures are the harness's loss{{end}}</td><td>{{.DatasetText}}</td>
</tr>
{{end}}</table>
<figure><a href="` + faultRecoveryFile + `"><img src="` + faultRecoveryFile + `" alt="recovery time per orchestrator and shape"></a><figcaption>Each dot a repetition's recovery time, the bar its median; a cross under "never" is a repetition that did not recover before its step ended.</figcaption></figure>
{{end}}
`
