package wrongsetup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/results"
)

// Spec is one sweep named name on orch with an app per wrong setup; fill
// replaces the rows' placeholders.
func Spec(name, orch string, rows []Row, fill *strings.Replacer) string {
	var b strings.Builder
	fmt.Fprintf(&b, `sweep %q {
  seed          = 11
  repetitions   = 1
  deploy        = "per-configuration"
  warmup        = "1s"
  duration      = "4s"
  cooldown      = "0s"
  early_stop    = false
  orchestrators = [%q]
`, name, orch)
	for _, c := range rows {
		fmt.Fprintf(&b, "\n  app %q {\n    %s\n  }\n", c.App, fill.Replace(c.Block))
	}
	b.WriteString(`
  slo {
    p99_ms             = 1000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
`)
	return b.String()
}

// stopsBeforeLoad are the gates whose failure ends a step before any load,
// so it archives no accounting.
var stopsBeforeLoad = map[string]bool{"limits": true, "little": true, "tool-entry": true}

// Check reads the sweep's archive in dir and holds every step to its row:
// the outcome, the gate that failed and what its detail names (after
// fill). Every step that ran load must have archived balanced accounting.
func Check(t testing.TB, dir, sweep string, rows []Row, fill *strings.Replacer) []results.StepResult {
	t.Helper()
	archive := results.Archive{Dir: dir}
	id, err := archive.Resolve(sweep)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := archive.LoadSteps(id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Row{}
	for _, c := range rows {
		c.Detail = fill.Replace(c.Detail)
		want[c.App] = c
	}
	if len(steps) != len(want) {
		t.Fatalf("archived %d steps, want %d", len(steps), len(want))
	}
	for _, s := range steps {
		w, ok := want[s.App]
		if !ok {
			t.Errorf("unexpected step %s", s.Step)
			continue
		}
		checkStep(t, s, w)
	}
	return steps
}

func checkStep(t testing.TB, s results.StepResult, w Row) {
	t.Helper()
	var failed *results.Gate
	for i, g := range s.Gates {
		if g.Name == w.Gate && !g.Passed && !g.NotChecked {
			failed = &s.Gates[i]
		}
	}
	switch {
	case s.Outcome != w.Want:
		t.Errorf("%s on %s: outcome %s %v, want %s by the %s gate; gates %+v", s.App, s.Orchestrator, s.Outcome, s.Reasons, w.Want, w.Gate, s.Gates)
	case failed == nil:
		t.Errorf("%s on %s: the %s gate did not fail: %+v", s.App, s.Orchestrator, w.Gate, s.Gates)
	case !strings.Contains(failed.Detail, w.Detail):
		t.Errorf("%s on %s: %s gate says %q, want it to name %q", s.App, s.Orchestrator, w.Gate, failed.Detail, w.Detail)
	default:
		t.Logf("%s on %s: %s, %s: %s", s.App, s.Orchestrator, s.Outcome, failed.Name, failed.Detail)
	}
	switch {
	case s.Accounting != nil && !s.Accounting.Balanced():
		t.Errorf("%s: due != completed + errors + timeouts + unsent: %+v", s.App, *s.Accounting)
	case s.Accounting == nil && s.App != "killed" && !stopsBeforeLoad[w.Gate]:
		t.Errorf("%s: no accounting archived", s.App)
	}
}

// CheckOverload holds the two overload rows to what the schedule decides:
// the same non-zero due count whichever engine sends it, and a backlog
// left by a server offered 1.2x its capacity.
func CheckOverload(t testing.TB, steps []results.StepResult) {
	t.Helper()
	due := map[string]int64{}
	for _, st := range steps {
		if st.Accounting != nil {
			due[st.App] = st.Accounting.Due
		}
	}
	if due["overload-loop"] == 0 || due["overload-loop"] != due["overload-goroutine"] {
		t.Errorf("due at 1.2x capacity: loop %d, goroutine %d; want equal and non-zero", due["overload-loop"], due["overload-goroutine"])
	}
	for _, s := range steps {
		if strings.HasPrefix(s.App, "overload-") && s.Accounting != nil && s.Accounting.Unsent == 0 {
			t.Errorf("%s: a server offered 1.2x its capacity left no backlog: %+v", s.App, *s.Accounting)
		}
	}
}
