package gates

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

func TestFaultGateMeasuredWindow(t *testing.T) {
	from := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	to := from.Add(30 * time.Second)
	fault := func(at time.Duration) results.FaultRecord {
		return results.FaultRecord{Kind: orchestrator.FaultKillTask, Service: "redis", At: from.Add(at)}
	}
	cases := []struct {
		name       string
		f          results.FaultRecord
		from, to   time.Time
		passed     bool
		notChecked bool
		detail     string
	}{
		{"inside", fault(10 * time.Second), from, to, true, false, "kill-task on redis at 10.0 s into the measurement of 30.0 s"},
		{"in the warm-up", fault(-2500 * time.Millisecond), from, to, false, false,
			"kill-task on redis was injected 2.5 s before the measured window began (in the warm-up), at 19:59:57.500; the window ran 20:00:00.000 to 20:00:30.000"},
		{"after the window", fault(31 * time.Second), from, to, false, false,
			"kill-task on redis was injected 31.0 s into a measured window of 30.0 s, after it ended, at 20:00:31.000"},
		{"not injected", results.FaultRecord{Kind: orchestrator.FaultKillTask, Service: "redis", Error: "no instance of redis"}, from, to, false, false, "no instance of redis"},
		{"no window", fault(10 * time.Second), time.Time{}, time.Time{}, false, true, "no measured window"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := FaultGate(c.f, c.from, c.to)
			if g.Name != Fault || g.Breaks || g.Passed != c.passed || g.NotChecked != c.notChecked || !strings.Contains(g.Detail, c.detail) {
				t.Fatalf("gate = %+v, want passed=%v notChecked=%v with %q", g, c.passed, c.notChecked, c.detail)
			}
		})
	}
}
