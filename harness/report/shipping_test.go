package report

import (
	stdhtml "html"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

func TestReportShowsTheAgentCostAndLogLinks(t *testing.T) {
	spec := &experiment.Sweep{Name: "sh", Repetitions: 1, Orchestrators: []string{"nomad"}}
	rec := &results.SweepRecord{ID: "sh-1", Spec: spec}
	start := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	on := results.StepResult{Labels: results.Labels{Sweep: "sh-1", Step: "shipped", App: "taewa", Orchestrator: "nomad", OfferedRPS: 10, Rep: 1},
		Start: start, End: start.Add(12 * time.Second), Outcome: results.OutcomeValid,
		Metadata: map[string]any{"shipping": results.Shipping{Mode: "on", Agent: "orchbench-agent", Cores: 0.0421, ResidentBytes: 96 << 20,
			Tasks: []results.TaskCPU{{Task: "otelcol", Cores: 0.0421}}, LogsURL: "http://127.0.0.1:9428", Jobs: []string{"taewa"}}}}
	// as read back from an archive: a JSON tree, not the typed value
	off := results.StepResult{Labels: results.Labels{Sweep: "sh-1", Step: "quiet", App: "taewa-quiet", Orchestrator: "nomad", OfferedRPS: 10, Rep: 1},
		Start: start.Add(time.Minute), End: start.Add(72 * time.Second), Outcome: results.OutcomeValid,
		Metadata: map[string]any{"shipping": map[string]any{"mode": "off", "cores": 0.0, "logs_url": "http://127.0.0.1:9428", "jobs": []any{"taewa-quiet"}}}}
	before := results.StepResult{Labels: results.Labels{Sweep: "sh-1", Step: "old", App: "taewa", Orchestrator: "nomad", OfferedRPS: 20, Rep: 1}, Metadata: map[string]any{}}
	page, _ := Build(rec, []results.StepResult{on, off, before})
	all := stdhtml.UnescapeString(string(page))
	i := strings.Index(all, `id="shipping"`)
	if i < 0 {
		t.Fatal("no shipping table")
	}
	table := all[i : i+strings.Index(all[i:], "</table>")]
	for _, want := range []string{"<td>shipped</td>", "0.042", "<td class=\"num\">96</td>", "<td>quiet</td>", "stopped",
		"Steps with shipping on: 1, agent CPU median 0.042 cores", "steps with shipping off: 1"} {
		if !strings.Contains(all, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	if strings.Contains(table, "<td>old</td>") {
		t.Error("a step measured before shipping existed is listed")
	}
	// the link queries the step's job over the step's time range
	ui, api, ok := results.StepLogs(on)
	if !ok || !strings.Contains(table, ui) || !strings.Contains(table, api) {
		t.Fatalf("the step's log links are missing: %v %q %q", ok, ui, api)
	}
	u, err := url.Parse(api)
	if err != nil {
		t.Fatal(err)
	}
	want := `_time:[2026-11-26T05:00:00Z, 2026-11-26T05:00:12Z] nomad.job:in("taewa")`
	if q := u.Query().Get("query"); q != want || u.Path != "/select/logsql/query" {
		t.Errorf("LogsQL link %s queries %q, want %q", u.Path, q, want)
	}
	if _, _, ok := results.StepLogs(before); ok {
		t.Error("a step with no shipping record has a log link")
	}
}
