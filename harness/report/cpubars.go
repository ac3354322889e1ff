package report

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/orchbench/orchbench/harness/results"
)

// cpuPerRequestFile is the chart's file beside the report's index.html.
const cpuPerRequestFile = "cpu-per-request.svg"

// cpuBarTasks is how many tasks get a colour of their own; the rest of a
// bar is one grey "other tasks" segment, so the legend stays readable for
// an application of fifteen services.
const cpuBarTasks = 8

// cpuPerRequestSVG draws one horizontal bar per configuration and level:
// the CPU milliseconds one request cost, split by task, a task keeping its
// colour across bars. Datastores are drawn hatched, because whether the
// capacity is a datastore's or a service's is the first thing to see.
func cpuPerRequestSVG(rows []results.RequestCPU) []byte {
	// the tasks with the most CPU per request over all bars get colours
	total := map[string]float64{}
	datastore := map[string]bool{}
	maxBar := 0.0
	for _, r := range rows {
		all, _ := r.MillisPerRequest()
		maxBar = max(maxBar, all)
		for _, t := range r.Tasks {
			total[t.Task] += t.MillisPerRequest
			datastore[t.Task] = datastore[t.Task] || t.Datastore
		}
	}
	names := make([]string, 0, len(total))
	for n := range total {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(total[b], total[a]), cmp.Compare(a, b))
	})
	colour := map[string]string{}
	for i, n := range names {
		if i < cpuBarTasks {
			colour[n] = palette[i%len(palette)]
		}
	}
	// room for the longest bar label on the left, and for each bar's total
	// beside it before the legend (about 7 px a character at 12 px)
	longest := 0
	for _, r := range rows {
		longest = max(longest, len(r.Configuration+" at "+r.Level))
	}
	const top, barH, gap, plotW, charPx = 40, 22, 10, 420, 7
	left := 10 + longest*charPx
	legendX := left + plotW + 130
	w := legendX + 200
	h := max(top+len(rows)*(barH+gap)+40, top+(min(len(names), cpuBarTasks)+1)*legendRowPx+20)
	ticks, _, tmax := niceTicks(0, maxBar)
	scale := func(ms float64) float64 { return ms / tmax * plotW }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	b.WriteString(`<title>CPU per request by task</title>` + "\n")
	b.WriteString(`<defs><pattern id="ds" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="white" fill-opacity="0"/><line x1="0" y1="0" x2="0" y2="6" stroke="white" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">CPU per request by task (ms; datastores hatched)</text>`+"\n", 10)
	bottom := top + len(rows)*(barH+gap)
	for _, t := range ticks {
		x := float64(left) + scale(t.V)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>`+"\n", x, top-4, x, bottom, x, bottom+14, esc(t.Label))
	}
	for i, r := range rows {
		y := top + i*(barH+gap)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+barH/2+4, esc(r.Configuration+" at "+r.Level))
		x := float64(left)
		other := 0.0
		for _, t := range r.Tasks {
			c, ok := colour[t.Task]
			if !ok {
				other += t.MillisPerRequest
				continue
			}
			x = segment(&b, x, y, barH, scale(t.MillisPerRequest), c, t.Datastore, fmt.Sprintf("%s: %.3f ms per request, %.0f %% of the busy CPU", t.Task, t.MillisPerRequest, 100*t.ShareOfBusy))
		}
		if other > 0 {
			x = segment(&b, x, y, barH, scale(other), "#bbb", false, fmt.Sprintf("other tasks: %.3f ms per request", other))
		}
		all, _ := r.MillisPerRequest()
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#333">%.2f ms · %.0f rps</text>`+"\n", x+4, y+barH/2+4, all, r.AchievedRPS)
	}
	for i, n := range names {
		if i >= cpuBarTasks {
			break
		}
		y := top + i*legendRowPx
		segment(&b, float64(legendX), y, 12, 12, colour[n], datastore[n], n)
		label := n
		if datastore[n] {
			label += " (datastore)"
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", legendX+18, y+10, esc(label))
	}
	if len(names) > cpuBarTasks {
		y := top + cpuBarTasks*legendRowPx
		segment(&b, float64(legendX), y, 12, 12, "#bbb", false, "other tasks")
		fmt.Fprintf(&b, `<text x="%d" y="%d">%d other tasks</text>`+"\n", legendX+18, y+10, len(names)-cpuBarTasks)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// segment draws one piece of a bar with a tooltip and returns where the
// next one starts.
func segment(b *bytes.Buffer, x float64, y, h int, w float64, colour string, hatched bool, tip string) float64 {
	fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`+"\n", x, y, w, h, colour, esc(tip))
	if hatched {
		fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="url(#ds)"/>`+"\n", x, y, w, h)
	}
	return x + w
}
