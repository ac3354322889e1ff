package orchestrator

import (
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/toolload"
)

// The wall time is the run's real end less the window's start, and a
// window outside the run, or other connections than asked, is refused.
func TestToolRunSettle(t *testing.T) {
	started := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	run := ToolRun{Started: started, Ended: started.Add(33 * time.Second)}
	req := toolload.Request{Connections: 8}
	result := func(from time.Duration, seconds float64, conns int) *loadgen.Result {
		s := started.Add(from)
		return &loadgen.Result{Start: s, End: s.Add(time.Duration(seconds * float64(time.Second))), DurationSeconds: seconds,
			Config: loadgen.ConfigEcho{Connections: conns}}
	}
	res := result(2*time.Second, 30, 8)
	if err := run.Settle(res, req); err != nil || res.WallSeconds != 31 {
		t.Fatalf("a window inside the run: wall %.1f s, %v", res.WallSeconds, err)
	}
	if err := run.Settle(result(2*time.Second, 30, 0), req); err != nil {
		t.Fatalf("a tool that does not echo its connections: %v", err)
	}
	for name, c := range map[string]struct {
		res  *loadgen.Result
		want string
	}{
		"stale result":  {result(-90*time.Second, 30, 8), "the result's window begins at 2026-11-26T11:58:30Z, 90.0 s before the tool's run started (2026-11-26T12:00:00Z): it is not this run's result"},
		"after the end": {result(10*time.Second, 30, 8), "the result's window ends at 2026-11-26T12:00:40Z, 7.0 s after the tool's run ended (2026-11-26T12:00:33Z)"},
		"connections":   {result(time.Second, 30, 4), "the tool ran 4 connections, 8 were asked"},
	} {
		if err := run.Settle(c.res, req); err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
	if err := (ToolRun{}).Settle(result(0, 30, 8), req); err == nil || err.Error() != "the runner did not see the tool's run end, so its wall time is unknown" {
		t.Errorf("a run without an end: %v", err)
	}
	res = result(10*time.Second, 30, 8)
	run.Settle(res, req)
	if res.WallSeconds != 23 {
		t.Errorf("a tool that stopped 7 s into its own window: wall %.1f s, want 23", res.WallSeconds)
	}
}
