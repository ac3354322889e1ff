package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/results"
)

func TestCPUPerRequestChartHatchesDatastoresAndGroupsTheRest(t *testing.T) {
	row := results.RequestCPU{Configuration: "sn-nomad-unlimited", Level: "u16", AchievedRPS: 99,
		Tasks: []results.TaskRequestCPU{{Task: "ferretdb", Datastore: true, MillisPerRequest: 6.9, ShareOfBusy: 0.85}}}
	for i := range 10 {
		row.Tasks = append(row.Tasks, results.TaskRequestCPU{Task: fmt.Sprintf("svc%02d", i), MillisPerRequest: 0.1 - float64(i)/1000})
	}
	svg := string(cpuPerRequestSVG([]results.RequestCPU{row}))
	for _, want := range []string{
		"sn-nomad-unlimited at u16",
		"ferretdb: 6.900 ms per request, 85 % of the busy CPU",
		`fill="url(#ds)"`,
		"ferretdb (datastore)",
		"3 other tasks",                     // 11 tasks, 8 coloured
		"other tasks: 0.276 ms per request", // svc07..svc09 in one grey segment
		"7.86 ms · 99 rps",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if n := strings.Count(svg, `fill="url(#ds)"`); n != 2 { // the bar's segment and the legend's swatch
		t.Errorf("%d hatched rects, want 2 (only the datastore)", n)
	}
}
