package results

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
)

func TestDecideSeparatesBrokenFromInvalid(t *testing.T) {
	pass := Gate{Name: "healthy", Passed: true}
	slo := Gate{Name: "slo", Breaks: true, Detail: "p99 900 ms > 100 ms"}
	path := Gate{Name: "load-path", Detail: "127.0.0.1:9 is not a registered instance"}
	unchecked := Gate{Name: "responses", NotChecked: true, Detail: "no endpoint matches the probe"}
	for _, c := range []struct {
		name    string
		gates   []Gate
		outcome Outcome
		reasons []string
	}{
		{"all pass", []Gate{pass, unchecked}, OutcomeValid, nil},
		{"app failed under load", []Gate{pass, slo}, OutcomeBroken, []string{"slo: p99 900 ms > 100 ms"}},
		{"not what was declared wins", []Gate{pass, slo, path}, OutcomeInvalid, []string{"load-path: 127.0.0.1:9 is not a registered instance"}},
	} {
		r := StepResult{Gates: c.gates}
		r.Decide()
		if r.Outcome != c.outcome || !reflect.DeepEqual(r.Reasons, c.reasons) {
			t.Errorf("%s: %s %q, want %s %q", c.name, r.Outcome, r.Reasons, c.outcome, c.reasons)
		}
	}
	if (StepResult{Outcome: OutcomeBroken}).Measured() != true || (StepResult{Outcome: OutcomeBroken, Skipped: true}).Measured() {
		t.Error("a broken step is a measurement, a skipped one is not")
	}
}

// Summaries written before outcomes existed keep their meaning.
func TestLegacySummariesGetAnOutcome(t *testing.T) {
	a := Archive{Dir: t.TempDir()}
	dir := filepath.Join(a.Dir, "s", "x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		json    string
		outcome Outcome
		skipped bool
	}{
		{`{"valid": true, "gates": [{"name": "healthy", "passed": true}]}`, OutcomeValid, false},
		{`{"valid": false, "gates": [{"name": "limits", "detail": "2 != 0.5"}]}`, OutcomeInvalid, false},
		{`{"valid": false, "gates": [{"name": "early-stop", "detail": "skipped: broke at r100"}]}`, OutcomeBroken, true},
		{`{"outcome": "broken", "reasons": ["slo: p99"]}`, OutcomeBroken, false},
	} {
		if err := os.WriteFile(filepath.Join(dir, summaryFile), []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := a.LoadStep("s", "x")
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != c.outcome || r.Skipped != c.skipped {
			t.Errorf("%s: outcome %s skipped %v", c.json, r.Outcome, r.Skipped)
		}
	}
}

// A repetition skipped above its break is a broken repetition at that
// level. Left out, only the repetitions that held would remain, and the
// median breaking point would come out a level too high.
func TestSkippedRepetitionsCountAsBroken(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	var steps []StepResult
	add := func(rate float64, rep int, p99 float64) {
		st := experiment.Step{ID: experiment.StepID("taewa", "nomad", "baseline", rate, 0, rep), App: "taewa", Orchestrator: "nomad", Variant: "baseline", OfferedRPS: rate, Rep: rep}
		r := fakeResult("s", st, start)
		r.Errors = 0
		if p99 < 0 {
			r = StepResult{Labels: LabelsFor("s", st), Skipped: true, Outcome: OutcomeBroken, Gates: []Gate{{Name: GateEarlyStop, Detail: "skipped"}}}
		} else {
			r.Corrected.P99 = p99
			judge(&r)
		}
		steps = append(steps, r)
	}
	// rep 1 breaks at 100; reps 2 and 3 hold there. At 200 rep 2 breaks
	// (150 ms) and rep 3 holds (20 ms): over the two that ran the median is
	// 85 ms, under the SLO; with rep 1 as the worst case it is 150 ms.
	add(100, 1, 500)
	add(100, 2, 10)
	add(100, 3, 10)
	add(200, 1, -1)
	add(200, 2, 150)
	add(200, 3, 20)
	add(400, 1, -1)
	add(400, 2, -1)
	add(400, 3, 30)
	levels := Summarize(steps, testSLO)
	if l := levels[1]; l.Measured != 2 || l.Skipped != 1 || l.P99.Median != 85 || !l.Breaks() {
		t.Fatalf("r200: %+v", l)
	}
	if !strings.Contains(strings.Join(levels[1].Details, ";"), "1 of 3 repetitions broke at a lower level") {
		t.Errorf("details do not say why: %q", levels[1].Details)
	}
	if l := levels[2]; l.Measured != 1 || !l.Breaks() {
		t.Fatalf("r400: %+v", l)
	}
	only := Summarize(append(steps[:0:0], steps[3]), testSLO)[0] // r200 rep 1, skipped
	if !only.Breaks() || len(only.Details) != 1 || only.Details[0] != "all 1 repetitions broke at a lower level" {
		t.Fatalf("a level where nothing ran: %+v", only)
	}
	bp := BreakingPoints(levels)[0]
	if !bp.Reached || bp.OfferedRPS != 200 || bp.LastGood.OfferedRPS != 100 || bp.MaxMeasured.OfferedRPS != 400 {
		t.Fatalf("breaking point %+v", bp)
	}
}

// An invalid step run again by --resume keeps the first attempt's files.
func TestRewrittenStepKeepsEarlierAttempt(t *testing.T) {
	a := Archive{Dir: t.TempDir()}
	start := time.UnixMilli(1_700_000_000_000)
	rec := testSweep(t, start)
	if err := a.CreateSweep(rec); err != nil {
		t.Fatal(err)
	}
	r := fakeResult(rec.ID, rec.Plan[0], start)
	r.Gates = append(r.Gates, Gate{Name: "load", Detail: "load job killed"})
	r.Decide()
	if err := a.WriteStep(rec.ID, r, map[string][]byte{"raw.txt": []byte("first")}); err != nil {
		t.Fatal(err)
	}
	r2 := fakeResult(rec.ID, rec.Plan[0], start)
	if err := a.WriteStep(rec.ID, r2, map[string][]byte{"raw.txt": []byte("second")}); err != nil {
		t.Fatal(err)
	}
	got, err := a.LoadStep(rec.ID, r.Step)
	if err != nil || got.Outcome != OutcomeValid {
		t.Fatalf("rewritten step: %v %v", got, err)
	}
	first, err := os.ReadFile(filepath.Join(a.Dir, rec.ID, r.Step, "attempt-1", "raw.txt"))
	if err != nil || string(first) != "first" {
		t.Fatalf("first attempt lost: %q %v", first, err)
	}
	earlier, err := a.EarlierAttempts(rec.ID, r.Step)
	if err != nil || len(earlier) != 1 || earlier[0].Outcome != OutcomeInvalid {
		t.Fatalf("earlier attempts %+v %v, want the invalid first one", earlier, err)
	}
}
