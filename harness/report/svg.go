package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
)

// Point is one data point; when HasCI, YLo..YHi is drawn as an error bar.
type Point struct {
	X, Y     float64
	YLo, YHi float64
	HasCI    bool
}

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []Point
	Dashed bool
}

// RefLine is a horizontal reference (an SLO) drawn across the plot.
type RefLine struct {
	Y     float64
	Label string
}

// Tick is an axis tick at a data value with its label.
type Tick struct {
	V     float64
	Label string
}

// Chart is a line chart rendered to standalone SVG. It is deliberately
// small: linear axes with "nice" ticks, or caller-supplied ticks where the
// x values are already transformed (the percentile spectrum's log scale).
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	Refs                  []RefLine
	// Diagonal draws y = x (achieved vs offered).
	Diagonal bool
	// XTicks, when set, replaces the automatic x ticks and fixes the x range
	// to span them.
	XTicks []Tick
}

// Layout, in SVG user units.
const (
	width       = 820
	height      = 420
	plotLeft    = 70
	plotTop     = 40
	plotWidth   = 520
	plotHeight  = 310
	legendLeft  = plotLeft + plotWidth + 24
	legendRowPx = 18
)

// palette is a set of distinguishable colours, cycled by series index.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// SVG renders the chart.
func (c Chart) SVG() []byte {
	xmin, xmax, ymin, ymax := c.bounds()
	var xticks []Tick
	if len(c.XTicks) > 0 {
		xticks = c.XTicks
	} else {
		xticks, xmin, xmax = niceTicks(xmin, xmax)
	}
	yticks, ymin, ymax := niceTicks(ymin, ymax)
	sx := func(x float64) float64 { return plotLeft + (x-xmin)/(xmax-xmin)*plotWidth }
	sy := func(y float64) float64 { return plotTop + plotHeight - (y-ymin)/(ymax-ymin)*plotHeight }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", esc(c.Title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", plotLeft, esc(c.Title))

	// Grid, ticks and tick labels.
	b.WriteString(`<g class="axes" stroke="#ddd">` + "\n")
	for _, t := range yticks {
		y := sy(t.V)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`+"\n", plotLeft, y, plotLeft+plotWidth, y)
	}
	for _, t := range xticks {
		x := sx(t.V)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", x, plotTop, x, plotTop+plotHeight)
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", plotLeft, plotTop, plotWidth, plotHeight)
	b.WriteString(`<g class="ticks" fill="#333">` + "\n")
	for _, t := range yticks {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, sy(t.V)+4, esc(t.Label))
	}
	for _, t := range xticks {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", sx(t.V), plotTop+plotHeight+16, esc(t.Label))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", plotLeft+plotWidth/2, plotTop+plotHeight+38, esc(c.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(18,%d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", plotTop+plotHeight/2, esc(c.YLabel))

	// Everything else is clipped to the plot so reference lines outside the
	// data range do not spill over the labels.
	fmt.Fprintf(&b, `<clipPath id="plot"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath>`+"\n", plotLeft, plotTop, plotWidth, plotHeight)
	b.WriteString(`<g clip-path="url(#plot)">` + "\n")
	if c.Diagonal {
		lo, hi := math.Max(xmin, ymin), math.Min(xmax, ymax)
		fmt.Fprintf(&b, `<line class="ref" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="4 4"/>`+"\n", sx(lo), sy(lo), sx(hi), sy(hi))
	}
	for _, r := range c.Refs {
		fmt.Fprintf(&b, `<line class="ref" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#c00" stroke-dasharray="6 3"/>`+"\n", plotLeft, sy(r.Y), plotLeft+plotWidth, sy(r.Y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="#c00" text-anchor="end">%s</text>`+"\n", plotLeft+plotWidth-4, sy(r.Y)-4, esc(r.Label))
	}
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<g class="series" data-name="%s" stroke="%s" fill="%s">`+"\n", esc(s.Name), color, color)
		var pts bytes.Buffer
		for _, p := range s.Points {
			fmt.Fprintf(&pts, "%.1f,%.1f ", sx(p.X), sy(p.Y))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke-width="2"%s points="%s"/>`+"\n", dash, bytes.TrimSpace(pts.Bytes()))
		for _, p := range s.Points {
			if p.HasCI {
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke-width="1.5"/>`+"\n", sx(p.X), sy(p.YLo), sx(p.X), sy(p.YHi))
			}
			if len(s.Points) <= 40 {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3"><title>%s: %s, %s</title></circle>`+"\n", sx(p.X), sy(p.Y), esc(s.Name), fmtNum(p.X), fmtNum(p.Y))
			}
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n")

	// Legend.
	b.WriteString(`<g class="legend">` + "\n")
	row := 0
	for i, s := range c.Series {
		y := plotTop + 8 + row*legendRowPx
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", legendLeft, y, legendLeft+22, y, palette[i%len(palette)], dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", legendLeft+28, y+4, esc(s.Name))
		row++
	}
	if c.Diagonal {
		y := plotTop + 8 + row*legendRowPx
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#555" stroke-dasharray="4 4"/>`+"\n", legendLeft, y, legendLeft+22, y)
		fmt.Fprintf(&b, `<text x="%d" y="%d">achieved = offered</text>`+"\n", legendLeft+28, y+4)
		row++
	}
	for _, r := range c.Refs {
		y := plotTop + 8 + row*legendRowPx
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c00" stroke-dasharray="6 3"/>`+"\n", legendLeft, y, legendLeft+22, y)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", legendLeft+28, y+4, esc(r.Label))
		row++
	}
	b.WriteString("</g>\n</svg>\n")
	return b.Bytes()
}

// bounds spans every point, error bar and reference line, from y = 0 so
// latency differences are not exaggerated by a truncated axis.
func (c Chart) bounds() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = 0, math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			xmin, xmax = math.Min(xmin, p.X), math.Max(xmax, p.X)
			ymax = math.Max(ymax, p.Y)
			if p.HasCI {
				ymax = math.Max(ymax, p.YHi)
				ymin = math.Min(ymin, p.YLo)
			}
			ymin = math.Min(ymin, p.Y)
		}
	}
	for _, r := range c.Refs {
		ymax = math.Max(ymax, r.Y*1.05)
	}
	if len(c.XTicks) > 0 {
		xmin, xmax = c.XTicks[0].V, c.XTicks[len(c.XTicks)-1].V
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax = 0, 1
	}
	if math.IsInf(ymax, 0) {
		ymax = 1
	}
	if c.Diagonal {
		// The y = x line needs both axes to share a range to read well.
		xmin = math.Min(xmin, 0)
		ymax = math.Max(ymax, xmax)
	}
	return xmin, xmax, ymin, ymax
}

// niceTicks picks 4–8 ticks at 1, 2 or 5 × 10^k covering [lo, hi] and
// returns the widened range.
func niceTicks(lo, hi float64) ([]Tick, float64, float64) {
	if hi <= lo {
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)/2, hi+math.Abs(hi)/2
		}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	end := math.Ceil(hi/step) * step
	var ticks []Tick
	for v := start; v <= end+step/2; v += step {
		// Round away float noise such as 0.30000000000000004.
		v = math.Round(v/step) * step
		ticks = append(ticks, Tick{V: v, Label: fmtNum(v)})
	}
	return ticks, start, end
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e12 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func esc(s string) string { return html.EscapeString(s) }
