package studies

import (
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

type fakeStep struct {
	pack, orchestrator, variant string
	vars                        map[string]any
	rep                         int
	outcome                     results.Outcome
	qps, cores, meanMs          float64
	meta                        map[string]any
	endpoints                   []results.EndpointStats
	// users, rate and path are the step's level and route (8 users when
	// neither level is given)
	users  int
	rate   float64
	path   string
	runner string
}

func record(study string, steps []fakeStep) (*results.SweepRecord, []results.StepResult) {
	rec := &results.SweepRecord{ID: "s", Spec: &experiment.Sweep{Name: "s", Study: study}}
	var out []results.StepResult
	for _, f := range steps {
		vars := map[string]any{"variant": f.variant}
		for k, v := range f.vars {
			vars[k] = v
		}
		if f.users == 0 && f.rate == 0 {
			f.users = 8
		}
		app := f.pack + f.runner + varString(vars, "driver") + varString(vars, "difficulty") + varString(vars, "scale") +
			varString(vars, "storage_mode") + strings.Trim(f.path+varString(vars, "route"), "/")
		id := experiment.StepID(app, f.orchestrator, f.variant, f.rate, f.users, f.rep)
		rec.Plan = append(rec.Plan, experiment.Step{ID: id, App: app, Pack: f.pack, Orchestrator: f.orchestrator, Variant: f.variant, Vars: vars, Rep: f.rep,
			Users: f.users, OfferedRPS: f.rate, Load: experiment.Load{Path: f.path, Runner: f.runner}})
		r := results.StepResult{Outcome: f.outcome, AchievedRPS: f.qps, Endpoints: f.endpoints, Metadata: map[string]any{}}
		r.Step = id
		r.Corrected.Mean = f.meanMs
		if f.cores > 0 {
			r.Metadata["task_cpu"] = []results.TaskCPU{{Task: f.pack, Cores: f.cores}}
		}
		for k, v := range f.meta {
			r.Metadata[k] = v
		}
		out = append(out, r)
	}
	return rec, out
}

func row(t *testing.T, tab *Table, prefix ...string) []string {
	t.Helper()
	for _, r := range tab.Rows {
		if len(r) >= len(prefix) && strings.Join(r[:len(prefix)], "|") == strings.Join(prefix, "|") {
			return r
		}
	}
	t.Fatalf("no row %v in %v", prefix, tab.Rows)
	return nil
}

func TestStudy000ContainerOverProcess(t *testing.T) {
	var steps []fakeStep
	for rep, q := range []float64{100, 110, 90} {
		steps = append(steps,
			fakeStep{pack: "taewa", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"driver": "docker", "difficulty": 20000.0}, rep: rep + 1, outcome: results.OutcomeValid, qps: q, cores: 0.5},
			fakeStep{pack: "taewa", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"driver": "exec", "difficulty": 20000.0}, rep: rep + 1, outcome: results.OutcomeValid, qps: q / 2, cores: 1},
		)
	}
	// an invalid step measured nothing and must not move the figures
	steps = append(steps, fakeStep{pack: "taewa", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"driver": "exec", "difficulty": 20000.0}, rep: 4, outcome: results.OutcomeInvalid, qps: 1e6, cores: 1})
	tab := Headline(record("000", steps))
	r := row(t, tab, "taewa", "normal (n=20000)", "nomad")
	for i, want := range map[int]string{3: "100 (range 90–110, n=3, 75 %)", 4: "50 (range 45–55, n=3, 75 %)", 6: "200 (range 180–220, n=3, 75 %)", 7: "50 (range 45–55, n=3, 75 %)", 9: "1.077 / 0.576"} {
		if r[i] != want {
			t.Errorf("%s = %q, want %q", tab.Columns[i], r[i], want)
		}
	}
	// three repetitions each: the ratio's bounds are the ranges', and cover at least 0.75² of the time
	if r[5] != "2.000 (ranges 1.636–2.444, n=3, ≥ 56.2 %)" || !strings.HasPrefix(r[8], "4.000 (ranges ") {
		t.Errorf("ratios: qps %q, per core %q; want 2 and 4", r[5], r[8])
	}
	if !strings.Contains(strings.Join(tab.Notes, " "), "1 invalid steps are left out") {
		t.Errorf("notes %v", tab.Notes)
	}
	var text strings.Builder
	if err := tab.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{tab.Title, "100 (range 90–110, n=3, 75 %)  ", "1.077 / 0.576", "published: Grigoryev 2022", "- 1 invalid steps are left out"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the terminal table lacks %q:\n%s", want, text.String())
		}
	}
}

func TestStudy004LatencyPerReplicasAndCoreLimit(t *testing.T) {
	cpuErrors := []results.EndpointStats{{Name: "GET /cpu-intensive?num=8", Requests: 100, Errors: 92}, {Name: "GET /books", Requests: 100}}
	var steps []fakeStep
	for rep := 1; rep <= 2; rep++ {
		steps = append(steps,
			fakeStep{pack: "books-node", orchestrator: "nomad", variant: "unlimited", vars: map[string]any{"scale": 2.0}, rep: rep, outcome: results.OutcomeValid, meanMs: 178},
			fakeStep{pack: "books-kotlin", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"resource_scale": 1.0}, rep: rep, outcome: results.OutcomeBroken, meanMs: 238,
				endpoints: cpuErrors},
			fakeStep{pack: "books-kotlin", orchestrator: "nomad", variant: "unlimited", vars: map[string]any{"scale": 1.0}, rep: rep, outcome: results.OutcomeValid, meanMs: 117},
		)
	}
	tab := Headline(record("004", steps))
	node := row(t, tab, "Node/Express + sequelize", "2 replicas, no limits", "nomad")
	if node[3] != "178 (range 178–178, n=2, 50 %)" || node[6] != "178" {
		t.Errorf("node at 2 replicas: %v", node)
	}
	if r := row(t, tab, "Kotlin/Spring Boot + JPA", "1 replica, no limits", "nomad"); r[3] != "117 (range 117–117, n=2, 50 %)" {
		t.Errorf("kotlin at 1 replica: %v", r)
	}
	kotlin := row(t, tab, "Kotlin/Spring Boot + JPA", "1 replica, 1 core", "nomad")
	if kotlin[3] != "238 (range 238–238, n=2, 50 %)" || kotlin[5] != "92.0 (range 92.0–92.0, n=2, 50 %)" || !strings.HasPrefix(kotlin[6], "238") {
		t.Errorf("kotlin at 1 core: %v", kotlin)
	}
}

func TestNoStudyNoTable(t *testing.T) {
	if tab := Headline(record("", nil)); tab != nil {
		t.Errorf("a sweep without a study got %+v", tab)
	}
}

// A step whose service used less than 0.01 cores gives no figure per core:
// its ratio would be thousands of requests per idle core.
func TestStudy000LeavesOutPerCoreUnderAHundredthOfACore(t *testing.T) {
	var steps []fakeStep
	for rep, q := range []float64{100, 110, 90} {
		steps = append(steps,
			fakeStep{pack: "apache", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"driver": "docker"}, rep: rep + 1, outcome: results.OutcomeValid, qps: q, cores: 0.005},
			fakeStep{pack: "apache", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"driver": "exec"}, rep: rep + 1, outcome: results.OutcomeValid, qps: q, cores: 0.5},
		)
	}
	r := row(t, Headline(record("000", steps)), "apache", "static", "nomad")
	if r[6] != "-" || r[8] != "-" || !strings.HasPrefix(r[7], "200 (range 180–220") {
		t.Errorf("container qps/core %q, process %q, ratio %q: want none for the container under 0.01 cores", r[6], r[7], r[8])
	}
}
