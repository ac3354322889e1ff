package gates

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// An iterations run is complete only when every user finished its loops.
func TestIterationsGate(t *testing.T) {
	st := experiment.Step{Users: 5, Duration: time.Minute, Load: experiment.Load{Kind: experiment.LoadIterations,
		Iterations: &experiment.Iterations{Loops: 20, Requests: make([]experiment.Request, 5)}}}
	res := &loadgen.Result{Accounting: loadgen.Accounting{Due: 500, Completed: 490, Errors: 0, Timeouts: 10}, WallSeconds: 3}
	if g := IterationsGate(res, nil, st, "local"); !g.Passed {
		t.Fatalf("500 of 500 refused: %s", g.Detail)
	}
	res.Accounting = loadgen.Accounting{Due: 350, Completed: 350}
	if g := IterationsGate(res, nil, st, "local"); g.Passed || !strings.Contains(g.Detail, "only 350 of the 500 requests (5 threads × 20 loops × 5 requests)") {
		t.Fatalf("an unfinished run passed: %+v", g)
	}
	res.Accounting = loadgen.Accounting{Due: 500, Completed: 400}
	if g := IterationsGate(res, nil, st, "local"); g.Passed || !strings.Contains(g.Detail, "unaccounted") {
		t.Fatalf("an unbalanced run passed: %+v", g)
	}
}
