package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
)

var testSLO = experiment.SLO{P99Ms: 100, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}

// testSweep builds a two-variant sweep record with rates 100..400 and 3 reps.
func testSweep(t *testing.T, start time.Time) SweepRecord {
	t.Helper()
	s := &experiment.Sweep{
		Name: "t", Seed: 1, Repetitions: 3, Deploy: experiment.DeployPerConfiguration,
		Duration: 8 * time.Second, Orchestrators: []string{"nomad"}, SLO: testSLO,
		Apps: []experiment.App{{Name: "taewa", Pack: "taewa", Variants: []string{"baseline", "vertical"},
			Rates: []float64{100, 200, 400}, Load: experiment.Load{Kind: experiment.LoadOpen, Threads: 1, Connections: 1}}},
	}
	id := NewSweepID(s.Name, start)
	return SweepRecord{ID: id, Spec: s, Seed: s.Seed, Plan: experiment.Plan(s), GitSHA: "abc", Start: start,
		ToolVersions: map[string]string{"nomad": "1.10.0"}}
}

// fakeResult invents a step: baseline's p99 crosses 100 ms at 400 rps,
// vertical's never does.
func fakeResult(sweepID string, st experiment.Step, start time.Time) StepResult {
	p99 := st.OfferedRPS / 10 // 10, 20, 40 ms
	if st.Variant == "baseline" && st.OfferedRPS >= 400 {
		p99 = 150 + float64(st.Rep)
	}
	r := StepResult{
		Labels:      LabelsFor(sweepID, st),
		Outcome:     OutcomeValid,
		Gates:       []Gate{{Name: "healthy", Passed: true}, {Name: "limits", Passed: true, Detail: "cpu 0.5 = 0.5"}},
		AchievedRPS: st.OfferedRPS * 0.99,
		Requests:    int64(st.OfferedRPS * 8), Errors: 1, Bytes: int64(st.OfferedRPS * 8 * 100),
		Corrected:   Latency{P50: p99 / 4, P75: p99 / 3, P90: p99 / 2, P99: p99, P999: p99 * 1.5, Max: p99 * 2, Mean: p99 / 3},
		Uncorrected: Latency{P50: 1, P75: 2, P90: 3, P99: 4, P999: 5, Max: 6, Mean: 1.5},
		Spectrum:    []SpectrumPoint{{0, 0.5}, {50, p99 / 4}, {90, p99 / 2}, {99, p99}, {99.9, p99 * 1.5}, {100, p99 * 2}},
		Endpoints:   []EndpointStats{{Name: `/api/"quoted"\path`, Requests: 10, Latency: Latency{P99: 3}}},
		StatusCodes: map[string]int64{"200": int64(st.OfferedRPS*8) - 1, "503": 1},
		Series:      []Second{{T: 0, Offered: st.OfferedRPS, Achieved: st.OfferedRPS, P50Ms: 1, P99Ms: 2}, {T: 1, Offered: st.OfferedRPS, Achieved: st.OfferedRPS - 1, Errors: 1, P50Ms: 1, P99Ms: 3}},
		Metadata:    map[string]any{"resource_scale": 0.25},
		Start:       start,
		End:         start.Add(8 * time.Second),
	}
	judge(&r)
	return r
}

// judge gives a made-up step the outcome the runner would: broken when it
// breaks the SLO, valid otherwise.
func judge(r *StepResult) {
	r.Outcome, r.Reasons = OutcomeValid, nil
	if _, details := Violations(*r, testSLO); len(details) > 0 {
		r.Outcome, r.Reasons = OutcomeBroken, details
	}
}

func TestArchiveRoundTripAndResume(t *testing.T) {
	a := Archive{Dir: t.TempDir()}
	start := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	rec := testSweep(t, start)
	if rec.ID != "t-20250304T050607Z" {
		t.Fatalf("sweep ID = %s", rec.ID)
	}
	if err := a.CreateSweep(rec); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateSweep(rec); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second CreateSweep = %v, want ErrExist", err)
	}
	got, err := a.LoadSweep(rec.ID)
	if err != nil || got.GitSHA != "abc" || len(got.Plan) != len(rec.Plan) || got.Spec.SLO != testSLO {
		t.Fatalf("LoadSweep = %+v, %v", got, err)
	}

	// Two steps complete, a third interrupted before its marker.
	for i, st := range rec.Plan[:2] {
		r := fakeResult(rec.ID, st, start.Add(time.Duration(i)*10*time.Second))
		if err := a.WriteStep(rec.ID, r, map[string][]byte{"raw.txt": []byte("raw " + st.ID), "histogram.hlog": []byte("#hlog")}); err != nil {
			t.Fatal(err)
		}
	}
	partial := filepath.Join(a.Dir, rec.ID, rec.Plan[2].ID)
	os.MkdirAll(partial, 0o755)
	os.WriteFile(filepath.Join(partial, "summary.json"), []byte("{"), 0o644)

	done, err := a.CompletedSteps(rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{rec.Plan[0].ID: true, rec.Plan[1].ID: true}
	if !reflect.DeepEqual(done, want) {
		t.Fatalf("completed = %v, want %v", done, want)
	}
	steps, err := a.LoadSteps(rec.ID)
	if err != nil || len(steps) != 2 || steps[0].Step != rec.Plan[0].ID {
		t.Fatalf("LoadSteps = %d steps, %v", len(steps), err)
	}
	want0 := fakeResult(rec.ID, rec.Plan[0], start)
	if !reflect.DeepEqual(steps[0].Corrected, want0.Corrected) || steps[0].Endpoints[0].Name != want0.Endpoints[0].Name || steps[0].Metadata["resource_scale"] != 0.25 {
		t.Fatalf("step did not round-trip: %+v", steps[0])
	}
	raw, _ := os.ReadFile(a.StepFile(rec.ID, rec.Plan[0].ID, "raw.txt"))
	if string(raw) != "raw "+rec.Plan[0].ID {
		t.Fatalf("raw.txt = %q", raw)
	}
	// No temporary files are left behind.
	filepath.WalkDir(a.Dir, func(p string, d fs.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
	if err := a.WriteStep(rec.ID, StepResult{Labels: Labels{Step: "x"}}, map[string][]byte{"../evil": nil}); err == nil {
		t.Fatal("path traversal in file name accepted")
	}
	if err := a.WriteStep("nope", fakeResult("nope", rec.Plan[0], start), nil); err == nil {
		t.Fatal("step written into a sweep that was never created")
	}

	list, err := a.ListSweeps()
	if err != nil || len(list) != 1 || list[0].Name != "t" || list[0].Planned != 18 || list[0].Completed != 2 {
		t.Fatalf("ListSweeps = %+v, %v", list, err)
	}
	if id, err := a.Resolve("t"); err != nil || id != rec.ID {
		t.Fatalf("Resolve(name) = %s, %v", id, err)
	}
}

func TestMedianCI(t *testing.T) {
	if e := MedianCI(nil); e.N != 0 {
		t.Fatalf("empty = %+v", e)
	}
	if e := MedianCI([]float64{7}); e != (Estimate{Median: 7, Lo: 7, Hi: 7, N: 1}) {
		t.Fatalf("single = %+v", e)
	}
	xs := []float64{10, 11, 12, 13, 14, 15, 16, 17, 18, 100}
	e := MedianCI(xs)
	if e.Median != 14.5 || e.N != 10 {
		t.Fatalf("median = %+v", e)
	}
	if !(e.Lo >= 10 && e.Lo <= e.Median && e.Hi >= e.Median && e.Hi <= 100) || e.Hi-e.Lo < 1 {
		t.Fatalf("CI [%g, %g] implausible", e.Lo, e.Hi)
	}
	if e2 := MedianCI(xs); e2 != e {
		t.Fatal("interval not deterministic")
	}
	// ten values: [x_(2), x_(9)] covers 1 - 2·11/1024 of the time
	if e.Lo != 11 || e.Hi != 18 || e.Method != IntervalExact {
		t.Fatalf("interval %+v, want the order statistics 2 and 9", e)
	}
	// The outlier must not drag the interval up to it.
	if e.Hi > 50 {
		t.Fatalf("CI upper %g reaches the outlier", e.Hi)
	}
}

func TestSummarizeAndBreakingPoints(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	rec := testSweep(t, start)
	var steps []StepResult
	for _, st := range rec.Plan {
		steps = append(steps, fakeResult(rec.ID, st, start))
	}
	// An invalid step with absurd figures must not count.
	bad := fakeResult(rec.ID, experiment.Step{ID: "x", App: "taewa", Orchestrator: "nomad", Variant: "vertical", OfferedRPS: 200, Rep: 9}, start)
	bad.Corrected.P99 = 10000
	bad.Gates[1] = Gate{Name: "limits", Passed: false, Detail: "cpu 2 != 0.5"}
	bad.Decide()
	steps = append(steps, bad)

	levels := Summarize(steps, testSLO)
	if len(levels) != 6 {
		t.Fatalf("levels = %d, want 6", len(levels))
	}
	v200 := levels[4]
	if v200.Configuration() != "taewa-nomad-vertical" || v200.Level() != "r200" || v200.Measured != 3 || v200.Invalid != 1 || v200.P99.Median != 20 || v200.Breaks() {
		t.Fatalf("vertical r200 = %+v", v200)
	}
	b400 := levels[2]
	if b400.P99.Median != 152 || !reflect.DeepEqual(b400.Rules, []string{RuleLatency}) {
		t.Fatalf("baseline r400 = %+v", b400)
	}
	bps := BreakingPoints(levels)
	if len(bps) != 2 {
		t.Fatalf("breaking points = %d", len(bps))
	}
	if b := bps[0]; !b.Reached || b.OfferedRPS != 400 || b.Rules[0] != RuleLatency || b.LastGood.OfferedRPS != 200 {
		t.Fatalf("baseline breaking point = %+v", b)
	}
	if b := bps[1]; b.Reached || b.MaxMeasured.OfferedRPS != 400 {
		t.Fatalf("vertical breaking point = %+v", b)
	}

	// Throughput and error rules.
	r := fakeResult("s", experiment.Step{OfferedRPS: 1000}, start)
	r.Corrected.P99, r.AchievedRPS, r.Requests, r.Errors = 10, 900, 1000, 50
	rules, details := Violations(r, testSLO)
	if !reflect.DeepEqual(rules, []string{RuleThroughput, RuleErrors}) || len(details) != 2 {
		t.Fatalf("violations = %v %v", rules, details)
	}

	var out bytes.Buffer
	if err := FormatShow(&out, &rec, steps); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"taewa-nomad-baseline  r400", "BROKEN: p99 152.0 ms > 100 ms", "not reached up to r400", "19 of 18 planned steps done: 15 valid, 3 broken, 1 invalid, 0 skipped above a break", "--resume", "x: limits: cpu 2 != 0.5"} {
		if !strings.Contains(text, want) {
			t.Errorf("show output lacks %q:\n%s", want, text)
		}
	}
	if math.IsNaN(levels[0].Achieved.Median) {
		t.Fatal("NaN achieved")
	}
}

func TestEarlyStop(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	e := NewEarlyStop(testSLO)
	step := func(variant string, rate float64, rep int) experiment.Step {
		return experiment.Step{ID: experiment.StepID("taewa", "nomad", variant, rate, 0, rep), App: "taewa", Orchestrator: "nomad", Variant: variant, OfferedRPS: rate, Rep: rep}
	}
	// baseline breaks at 400 (fakeResult's p99 150 ms > 100).
	if broke, _ := e.Record(fakeResult("s", step("baseline", 200, 1), start)); broke {
		t.Fatal("200 rps should meet the SLO")
	}
	invalid := fakeResult("s", step("vertical", 100, 1), start)
	invalid.Outcome, invalid.Corrected.P99 = OutcomeInvalid, 1e6
	if broke, _ := e.Record(invalid); broke {
		t.Fatal("an invalid step must not stop a configuration")
	}
	broke, rules := e.Record(fakeResult("s", step("baseline", 400, 1), start))
	if !broke || rules[0] != RuleLatency {
		t.Fatalf("400 rps: broke=%v rules=%v", broke, rules)
	}
	if skip, _ := e.Skip(step("baseline", 400, 2)); skip {
		t.Fatal("the breaking level itself is still measured in later repetitions")
	}
	if skip, why := e.Skip(step("baseline", 800, 1)); !skip || !strings.Contains(why, "broke at r400") {
		t.Fatalf("800 rps not skipped: %v %q", skip, why)
	}
	if skip, _ := e.Skip(step("vertical", 800, 1)); skip {
		t.Fatal("another configuration was skipped")
	}
	// Another repetition is its own ascending series: one noisy break must
	// not censor it.
	if skip, _ := e.Skip(step("baseline", 800, 2)); skip {
		t.Fatal("repetition 2 was skipped because repetition 1 broke")
	}
}

func TestWithSustainedPerRepetition(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	var steps []StepResult
	add := func(variant string, rate float64, rep int, p99 float64, valid bool) {
		st := experiment.Step{ID: experiment.StepID("taewa", "nomad", variant, rate, 0, rep), App: "taewa", Orchestrator: "nomad", Variant: variant, OfferedRPS: rate, Rep: rep}
		r := fakeResult("s", st, start)
		r.Corrected.P99, r.Errors = p99, 0
		judge(&r)
		if !valid {
			r.Outcome = OutcomeInvalid
		}
		steps = append(steps, r)
	}
	// rep 1 breaks at 200, rep 2 at 400 (an invalid 200 is passed over),
	// rep 3 never breaks up to 400.
	add("baseline", 100, 1, 10, true)
	add("baseline", 200, 1, 500, true)
	add("baseline", 100, 2, 10, true)
	add("baseline", 200, 2, 900, false)
	add("baseline", 400, 2, 500, true)
	add("baseline", 400, 3, 20, true)
	add("baseline", 100, 3, 10, true)
	add("vertical", 100, 1, 500, true)
	bps := WithSustained([]BreakingPoint{{App: "taewa", Orchestrator: "nomad", Variant: "baseline"}, {App: "taewa", Orchestrator: "nomad", Variant: "vertical"}}, steps, testSLO)
	b := bps[0]
	if fmt.Sprint(b.SustainedReps) != "[100 100 400]" || b.Unbroken != 1 || b.Sustained.Median != 100 || b.Sustained.N != 3 {
		t.Fatalf("baseline sustained %v unbroken %d estimate %+v", b.SustainedReps, b.Unbroken, b.Sustained)
	}
	if got := b.SustainedText(); !strings.Contains(got, "(100 100 400)") || !strings.Contains(got, "1 of 3 never broke") {
		t.Errorf("text %q", got)
	}
	if v := bps[1]; fmt.Sprint(v.SustainedReps) != "[0]" || v.Unbroken != 0 {
		t.Errorf("vertical broke at its lowest level: %v, unbroken %d", v.SustainedReps, v.Unbroken)
	}
}

func TestSummarizeTaskCPUFromArchivedSteps(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	var steps []StepResult
	for rep, util := range []float64{0.9, 0.95, 1.0} {
		st := experiment.Step{ID: experiment.StepID("sn", "nomad", "baseline", 40, 0, rep+1), App: "sn", Orchestrator: "nomad", Variant: "baseline", OfferedRPS: 40, Rep: rep + 1}
		r := fakeResult("s", st, start)
		r.Metadata["task_cpu"] = []TaskCPU{
			{Task: "text", Cores: 0.03 * util / 2, LimitCores: 0.03, Utilization: util / 2},
			{Task: "compose-post", Cores: 0.03 * util, LimitCores: 0.03, Utilization: util, ThrottledRatio: 0.5},
			{Task: "redis", Cores: 0.2},
		}
		// As read back from the archive: plain JSON values.
		b, _ := json.Marshal(r.Metadata)
		r.Metadata = nil
		if err := json.Unmarshal(b, &r.Metadata); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, r)
	}
	levels := SummarizeTaskCPU(steps)
	if len(levels) != 1 || levels[0].Level != "r40" || len(levels[0].Tasks) != 3 {
		t.Fatalf("got %+v", levels)
	}
	hot := levels[0].Tasks[0]
	if hot.Task != "compose-post" || hot.Utilization != 0.95 || hot.ThrottledRatio != 0.5 || levels[0].Tasks[2].Task != "redis" {
		t.Fatalf("hottest first, uncapped last: %+v", levels[0].Tasks)
	}
	if s := hot.String(); !strings.Contains(s, "compose-post 95% of 0.03 cores") {
		t.Errorf("text %q", s)
	}
}
