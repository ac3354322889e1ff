package sweep

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

var study003 = []experiment.Phase{{Duration: 30 * time.Second}, {Duration: time.Minute, To: 1}, {Duration: 30 * time.Second, From: 1, To: 1}, {Duration: 30 * time.Second}}

// A phased step runs our generator with --phases at the step's rate,
// without -d or -R, and the schedule the generator builds from them is
// due exactly what the plan expects.
func TestPhasedStepRunsOurGeneratorOnItsPhases(t *testing.T) {
	st := experiment.Step{OfferedRPS: 100, Duration: 150 * time.Second, Load: experiment.Load{Kind: experiment.LoadOpen, Threads: 2, Connections: 16, Distribution: "fixed", Phases: study003}}
	args := loadArgs(&results.SweepRecord{Seed: 1}, st, []orchestrator.Endpoint{{Address: "127.0.0.1", Port: 8080}})
	i := slices.Index(args, "--phases")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no --phases in %q", args)
	}
	if slices.Contains(args, "-R") || slices.Contains(args, "-d") {
		t.Errorf("--phases replaces -R and -d, yet %q has them", args)
	}
	if got := args[i+1]; got != "30s@0,1m0s@0->100,30s@100,30s@0" {
		t.Errorf("--phases %q", got)
	}
	phases, err := loadgen.ParsePhases(args[i+1])
	if err != nil {
		t.Fatal(err)
	}
	sched := loadgen.ScheduleOf(phases)
	if sched.Duration() != st.Duration {
		t.Errorf("the generator runs %s, the step %s", sched.Duration(), st.Duration)
	}
	// 60 s ramping to 100 offer 3000, 30 s at 100 another 3000
	want := experiment.ExpectedRequests(st.Load.Phases, st.OfferedRPS)
	if got := sched.Hits(sched.Duration()); math.Abs(got-want) > 1e-6 || want != 6000 {
		t.Errorf("the generator's schedule is due %g, the plan expects %g (want 6000)", got, want)
	}
	if tp := toolPhases(st); !slices.Equal(tp, phases) {
		t.Errorf("a tool is asked %v, our generator %v", tp, phases)
	}
}

// A tool on plain rates gets one flat phase of the step's duration.
func TestToolPhasesOfPlainRates(t *testing.T) {
	st := experiment.Step{OfferedRPS: 40, Duration: 20 * time.Second, Warmup: 5 * time.Second, Load: experiment.Load{Kind: experiment.LoadOpen, Runner: experiment.RunnerArtillery}}
	req := mustToolRequest(t, st, "http://127.0.0.1:1/")
	if req.Rate != 40 || !slices.Equal(req.Phases, []loadgen.Phase{{Dur: 20 * time.Second, From: 40, To: 40}}) || req.Warmup != 5*time.Second {
		t.Errorf("request %+v", req)
	}
	closed := mustToolRequest(t, experiment.Step{Users: 4, Duration: time.Second}, "http://127.0.0.1:1/")
	if closed.Phases != nil || closed.Rate != 0 {
		t.Errorf("a closed loop was given arrivals: %+v", closed)
	}
}

// Artillery's ceiling is the worker threads its run reports: a run of one
// worker at 0.95 cores saturated it, even on a node of two cores and with
// no generator_cores declared.
func TestArtilleryCeilingIsItsWorkers(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int, cpu float64) limits.Usage {
		return limits.Usage{At: t0.Add(time.Duration(s) * time.Second), CPU: time.Duration(cpu * float64(time.Second))}
	}
	run := &orchestrator.ToolRun{CPU: []limits.Usage{at(0, 0), at(10, 9.5)}, LimitCores: 2, CPUSource: "cgroup /x"}
	res := &loadgen.Result{Start: t0, End: t0.Add(10 * time.Second), Config: loadgen.ConfigEcho{Threads: 1}}
	sr := results.StepResult{Metadata: map[string]any{}}
	g := toolGeneratorGate(&sr, "artillery", run, res, 0, gates.ServiceUse{Used: 0.1, Limit: 1})
	if g.Passed || g.NotChecked || !strings.Contains(g.Detail, "95 % of the 1 core artillery can use") {
		t.Errorf("one worker at 0.95 cores: %+v", g)
	}
	res.Config.Threads = 3
	if g := toolGeneratorGate(&sr, "artillery", run, res, 0, gates.ServiceUse{Used: 0.1, Limit: 1}); !g.Passed {
		t.Errorf("three workers at 0.95 cores on two: %+v", g)
	}
}
