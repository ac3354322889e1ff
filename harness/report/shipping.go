package report

import (
	"fmt"
	"slices"

	"github.com/orchbench/orchbench/harness/results"
)

// ShippingRow is one step in the shipping table: what the node agent cost
// during its load, and where its task logs are.
type ShippingRow struct {
	Step    string
	Outcome results.Outcome
	Mode    string
	Cores   string
	MiB     string
	LogsUI  string
	LogsAPI string
}

// ShippingSummary sets the agent's cost beside the steps measured without it.
type ShippingSummary struct {
	On, Off int
	// MedianCores is the agent's median CPU over the steps with shipping on.
	MedianCores string
	MaxCores    string
}

func shippingRows(steps []results.StepResult) ([]ShippingRow, *ShippingSummary) {
	var rows []ShippingRow
	sum := &ShippingSummary{}
	var cores []float64
	for _, r := range steps {
		s, ok := results.ShippingOf(r)
		if !ok {
			continue
		}
		row := ShippingRow{Step: r.Step, Outcome: r.Outcome, Mode: s.Mode, Cores: "-", MiB: "-"}
		switch {
		case s.Mode == "off":
			sum.Off++
			row.Cores = "stopped"
		case len(s.Tasks) > 0:
			sum.On++
			cores = append(cores, s.Cores)
			row.Cores = fmt.Sprintf("%.3f", s.Cores)
			row.MiB = fmt.Sprintf("%.0f", float64(s.ResidentBytes)/(1<<20))
		}
		row.LogsUI, row.LogsAPI, _ = results.StepLogs(r)
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	if len(cores) > 0 {
		sum.MedianCores = fmt.Sprintf("%.3f", results.MedianCI(cores).Median)
		sum.MaxCores = fmt.Sprintf("%.3f", slices.Max(cores))
	}
	return rows, sum
}

const shippingSection = `{{if .Shipping}}<h2>Log and metrics shipping</h2>
<p>The node agent tails every task's log into VictoriaLogs and sends the node's metrics to VictoriaMetrics. It shares the node with the measured services, so its CPU during each step's load is recorded here; steps declared with <code>shipping = "off"</code> ran with it stopped (their logs were shipped when it ran again).
{{with .ShippingSummary}}Steps with shipping on: {{.On}}{{if .MedianCores}}, agent CPU median {{.MedianCores}} cores, at most {{.MaxCores}}{{end}}; steps with shipping off: {{.Off}}.{{end}}</p>
<table id="shipping">
<tr><th>step</th><th>outcome</th><th>shipping</th><th>agent cores</th><th>agent MiB resident</th><th>task logs</th></tr>
{{range .Shipping}}<tr{{if eq .Outcome "invalid"}} class="invalid"{{end}}><td>{{.Step}}</td><td>{{.Outcome}}</td><td>{{.Mode}}</td><td class="num">{{.Cores}}</td><td class="num">{{.MiB}}</td>
<td>{{if .LogsUI}}<a href="{{.LogsUI}}">in VictoriaLogs</a> · <a href="{{.LogsAPI}}">LogsQL</a>{{else}}-{{end}}</td></tr>
{{end}}</table>
{{end}}
`
