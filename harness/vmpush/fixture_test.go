package vmpush

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

var testSLO = experiment.SLO{P99Ms: 100, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}

// testSweep builds a two-variant sweep record with rates 100..400 and 3 reps.
func testSweep(t *testing.T, start time.Time) results.SweepRecord {
	t.Helper()
	s := &experiment.Sweep{
		Name: "t", Seed: 1, Repetitions: 3, Deploy: experiment.DeployPerConfiguration,
		Duration: 8 * time.Second, Orchestrators: []string{"nomad"}, SLO: testSLO,
		Apps: []experiment.App{{Name: "taewa", Pack: "taewa", Variants: []string{"baseline", "vertical"},
			Rates: []float64{100, 200, 400}, Load: experiment.Load{Kind: experiment.LoadOpen, Threads: 1, Connections: 1}}},
	}
	return results.SweepRecord{ID: results.NewSweepID(s.Name, start), Spec: s, Seed: s.Seed, Plan: experiment.Plan(s), GitSHA: "abc", Start: start}
}

// fakeResult invents a measured step whose p99 is a tenth of its rate in
// ms, achieved 99 % of what was offered, over two seconds of series.
func fakeResult(sweepID string, st experiment.Step, start time.Time) results.StepResult {
	p99 := st.OfferedRPS / 10
	r := results.StepResult{
		Labels:      results.LabelsFor(sweepID, st),
		Gates:       []results.Gate{{Name: "healthy", Passed: true}, {Name: "limits", Passed: true, Detail: "cpu 0.5 = 0.5"}},
		AchievedRPS: st.OfferedRPS * 0.99,
		Requests:    int64(st.OfferedRPS * 8), Errors: 1, Bytes: int64(st.OfferedRPS * 8 * 100),
		Corrected:   results.Latency{P50: p99 / 4, P75: p99 / 3, P90: p99 / 2, P99: p99, P999: p99 * 1.5, Max: p99 * 2, Mean: p99 / 3},
		Uncorrected: results.Latency{P50: 1, P75: 2, P90: 3, P99: 4, P999: 5, Max: 6, Mean: 1.5},
		Endpoints:   []results.EndpointStats{{Name: `/api/"quoted"\path`, Requests: 10, Latency: results.Latency{P99: 3}}},
		StatusCodes: map[string]int64{"200": int64(st.OfferedRPS*8) - 1, "503": 1},
		Series: []results.Second{{T: 0, Offered: st.OfferedRPS, Achieved: st.OfferedRPS, P50Ms: 1, P99Ms: 2},
			{T: 1, Offered: st.OfferedRPS, Achieved: st.OfferedRPS - 1, Errors: 1, P50Ms: 1, P99Ms: 3}},
		Metadata: map[string]any{"resource_scale": 0.25},
		Start:    start,
		End:      start.Add(8 * time.Second),
	}
	r.Outcome = results.OutcomeValid
	if _, details := results.Violations(r, testSLO); len(details) > 0 {
		r.Outcome, r.Reasons = results.OutcomeBroken, details
	}
	return r
}

// writeTestArchive archives the first n steps of a test sweep.
func writeTestArchive(t *testing.T, start time.Time, n int) (results.Archive, results.SweepRecord) {
	t.Helper()
	a := results.Archive{Dir: t.TempDir()}
	rec := testSweep(t, start)
	if err := a.CreateSweep(rec); err != nil {
		t.Fatal(err)
	}
	for i, st := range rec.Plan[:n] {
		if err := a.WriteStep(rec.ID, fakeResult(rec.ID, st, start.Add(time.Duration(i)*10*time.Second)), nil); err != nil {
			t.Fatal(err)
		}
	}
	return a, rec
}

// snapshot reads every file under dir, to show a push left the archive alone.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}
