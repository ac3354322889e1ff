package results

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
)

// A level prints no ratio over less than 0.01 cores, says which cores each
// ratio divides by, and counts the whole application, its stores apart,
// also from archives that recorded only the per-task figures.
func TestLevelPerCoreFigures(t *testing.T) {
	var steps []StepResult
	for rep := 1; rep <= 3; rep++ {
		st := experiment.Step{ID: experiment.StepID("social-network", "nomad", "baseline", 200, 0, rep), App: "social-network", Orchestrator: "nomad", Variant: "baseline", OfferedRPS: 200, Rep: rep}
		r := StepResult{Labels: LabelsFor("s", st), Outcome: OutcomeValid, AchievedRPS: 200, Requests: 6000,
			// an archive from before the threshold: the front end's 0.004 cores made a ratio
			ServiceCores: 0.004, QPSPerCore: 50000}
		if rep == 3 {
			// recorded by this version
			r.ServiceCores, r.QPSPerCore = 0.004, 0
			r.AppCores, r.DatastoreCores, r.QPSPerAppCore = 2, 0.5, 100
		} else {
			// an older one: only the tasks' CPU, no role known
			r.Metadata = map[string]any{"task_cpu": []any{
				map[string]any{"task": "frontend", "cores": 0.004},
				map[string]any{"task": "compose-post", "cores": 1.996},
			}}
		}
		steps = append(steps, r)
	}
	l := Summarize(steps, testSLO)[0]
	if l.QPSPerCore.N != 0 || l.ServiceCores.N != 3 {
		t.Fatalf("service: %+v over %+v", l.QPSPerCore, l.ServiceCores)
	}
	if got := l.ServicePerCoreText(); got != "n/a (<0.01 cores) (0.004 cores)" {
		t.Errorf("service figure %q", got)
	}
	if l.QPSPerAppCore.N != 3 || l.QPSPerAppCore.Median != 100 || l.AppCores.Median != 2 {
		t.Fatalf("application: %+v over %+v", l.QPSPerAppCore, l.AppCores)
	}
	if got := l.AppPerCoreText(); got != "100.0 (range 100.0–100.0, n=3, 75 %) (2.00 cores)" {
		t.Errorf("application figure %q", got)
	}
	// the datastores' share shows when most repetitions knew it
	steps[0].AppCores, steps[0].DatastoreCores = 2, 0.6
	if got := Summarize(steps, testSLO)[0].AppPerCoreText(); !strings.HasSuffix(got, "(2.00 cores, 0.50 in datastores)") {
		t.Errorf("with datastores %q", got)
	}

	var out strings.Builder
	rec := &SweepRecord{ID: "s", Spec: &experiment.Sweep{Name: "s", SLO: testSLO}, Start: time.Unix(0, 0)}
	if err := FormatShow(&out, rec, steps); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RPS PER CORE OF THE MEASURED SERVICE", "RPS PER CORE OF THE APPLICATION", "n/a (<0.01 cores) (0.004 cores)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "50000") {
		t.Errorf("show prints the ratio over 0.004 cores:\n%s", out.String())
	}
}
