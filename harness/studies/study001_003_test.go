package studies

import (
	"slices"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
)

func TestStudy001MeanPerModeReplicasAndUsers(t *testing.T) {
	var steps []fakeStep
	for rep, mean := range []float64{300, 320, 310} {
		for _, users := range []int{10, 100} {
			steps = append(steps,
				fakeStep{pack: "voting", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"storage_mode": "v2"},
					users: users, rep: rep + 1, outcome: results.OutcomeValid, meanMs: mean * float64(users) / 10, qps: 5},
				fakeStep{pack: "voting", orchestrator: "nomad", variant: "horizontal", vars: map[string]any{"storage_mode": "v3", "scale": 5.0, "server": "wsgi"},
					users: users, rep: rep + 1, outcome: results.OutcomeValid, meanMs: mean / 2, qps: 9})
		}
	}
	// an invalid step says nothing about its configuration
	steps = append(steps, fakeStep{pack: "voting", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"storage_mode": "v2"},
		users: 10, rep: 4, outcome: results.OutcomeInvalid, meanMs: 99999},
		fakeStep{pack: "voting", orchestrator: "nomad", variant: "baseline", vars: map[string]any{"storage_mode": "v2"},
			users: 10, rep: 1, outcome: results.OutcomeValid, meanMs: 400, runner: "locust"})
	steps = append(steps, fakeStep{pack: "voting", orchestrator: "nomad", variant: "unlimited", vars: map[string]any{"storage_mode": "v2", "scale": 1.0},
		users: 10, rep: 1, outcome: results.OutcomeValid, meanMs: 250})
	tab := Headline(record("001", steps))
	if tab == nil || tab.Study != "001" {
		t.Fatalf("no study 001 table: %+v", tab)
	}
	r := row(t, tab, "v2", "runserver", "1", "baseline", "10", "nomad", "orchbench")
	if !strings.HasPrefix(r[7], "310 ") {
		t.Errorf("v2 at 10 users: mean %q, want the median of 300, 320, 310", r[7])
	}
	if !strings.Contains(r[10], "313 / 330 / 565 (9 shapes)") {
		t.Errorf("published at 10 users: %q", r[10])
	}
	r = row(t, tab, "v2", "runserver", "1", "baseline", "100", "nomad", "orchbench")
	if !strings.HasPrefix(r[7], "3100 ") || !strings.Contains(r[10], "1262 / 1770 / 3554 (8 shapes)") {
		t.Errorf("v2 at 100 users: %v", r)
	}
	r = row(t, tab, "v3", "wsgi", "5", "horizontal", "10", "nomad", "orchbench")
	if !strings.HasPrefix(r[7], "155 ") || !strings.HasPrefix(r[9], "9.0") {
		t.Errorf("v3 under wsgi with 5 replicas: %v", r)
	}
	// Locust's steps of the same configuration are a row of their own
	r = row(t, tab, "v2", "runserver", "1", "baseline", "10", "nomad", "locust")
	if !strings.HasPrefix(r[7], "400 ") {
		t.Errorf("v2 at 10 users by Locust: %v", r)
	}
	// the same mode, replicas and users without a CPU cap is another row
	r = row(t, tab, "v2", "runserver", "1", "unlimited", "10", "nomad", "orchbench")
	if !strings.HasPrefix(r[7], "250 ") {
		t.Errorf("v2 at 10 users, unlimited: %v", r)
	}
	if len(tab.Rows) != 6 {
		t.Errorf("%d rows, want 6 (2 configurations x 2 populations, Locust's, and unlimited's): %v", len(tab.Rows), tab.Rows)
	}
	if last := tab.Notes[len(tab.Notes)-1]; last != "1 invalid steps are left out." {
		t.Errorf("the invalid step is not said: %q", last)
	}
}

func TestStudy003HighestRateHeldPerRouteAndInstances(t *testing.T) {
	type rung struct {
		rate   float64
		broken bool
	}
	var steps []fakeStep
	runner := "artillery"
	add := func(path string, instances float64, rep int, ladder []rung) {
		for _, l := range ladder {
			outcome := results.OutcomeValid
			if l.broken {
				outcome = results.OutcomeBroken
			}
			steps = append(steps, fakeStep{pack: "frontier", orchestrator: "swarm", variant: "baseline", vars: map[string]any{"scale": instances},
				path: path, rate: l.rate, rep: rep, outcome: outcome, runner: runner})
		}
	}
	// root with one instance: held 100, 100, 50 (the third broke at 100)
	add("/", 1, 1, []rung{{10, false}, {50, false}, {100, false}, {500, true}})
	add("/", 1, 2, []rung{{10, false}, {50, false}, {100, false}, {500, true}})
	add("/", 1, 3, []rung{{10, false}, {50, false}, {100, true}})
	// remote breaks at its lowest rate every time
	add("/remote", 1, 1, []rung{{10, true}})
	add("/remote", 1, 2, []rung{{10, true}})
	// the pack's route variable names the route when the spec sets no path
	for rep := 1; rep <= 2; rep++ {
		steps = append(steps, fakeStep{pack: "frontier", orchestrator: "swarm", variant: "baseline",
			vars: map[string]any{"scale": 1.0, "route": "/alternate"}, rate: 10, rep: rep, outcome: results.OutcomeValid},
			fakeStep{pack: "frontier", orchestrator: "swarm", variant: "baseline",
				vars: map[string]any{"scale": 1.0, "route": "/alternate"}, rate: 50, rep: rep, outcome: results.OutcomeBroken})
	}
	// root with three instances never broke: a lower bound
	add("/", 3, 1, []rung{{10, false}, {50, false}, {100, false}, {500, false}})
	// the same route by our generator is a row of its own
	runner = "orchbench"
	add("/", 1, 1, []rung{{10, false}, {50, false}, {100, false}, {500, false}})
	tab := Headline(record("003", steps))
	if tab == nil || tab.Study != "003" {
		t.Fatalf("no study 003 table: %+v", tab)
	}
	r := row(t, tab, "root", "1", "-", "swarm", "artillery")
	if !strings.HasPrefix(r[5], "100 ") || r[6] != "0 of 3" || r[7] != "≤ 300" {
		t.Errorf("root, one instance: %v", r)
	}
	r = row(t, tab, "root", "1", "-", "swarm", "orchbench")
	if !strings.HasPrefix(r[5], "500") || r[6] != "1 of 1" {
		t.Errorf("root, one instance, by orchbench: %v", r)
	}
	r = row(t, tab, "root", "3", "-", "swarm", "artillery")
	if !strings.HasPrefix(r[5], "500") || r[6] != "1 of 1" || r[7] != "500" {
		t.Errorf("root, three instances: %v", r)
	}
	r = row(t, tab, "remote", "1", "-", "swarm", "artillery")
	if !strings.HasPrefix(r[5], "0 ") || r[7] != "< 10" {
		t.Errorf("remote: %v", r)
	}
	r = row(t, tab, "alternate", "1", "-", "swarm")
	if !strings.HasPrefix(r[5], "10 ") || r[7] != "≤ 45" {
		t.Errorf("alternate, by the route variable: %v", r)
	}
	if tab.Rows[0][0] != "root" || tab.Rows[len(tab.Rows)-1][0] != "alternate" {
		t.Errorf("routes out of the study's order: %v", tab.Rows)
	}
}

func TestRoute003(t *testing.T) {
	for path, want := range map[string]string{"/": "root", "": "root", "/remote": "remote", "/cached?keys=10": "cached", "/alternate/": "alternate"} {
		if got := route003(path); got != want {
			t.Errorf("route003(%q) = %q, want %q", path, got, want)
		}
	}
}

// A study the parser accepts must have a table, and a table a study the
// parser accepts: the two lists live in different packages.
func TestEveryAcceptedStudyHasATable(t *testing.T) {
	for _, s := range experiment.Studies {
		if _, ok := builders[s]; !ok {
			t.Errorf("study %q is accepted by specs but has no headline table", s)
		}
	}
	for s := range builders {
		if !slices.Contains(experiment.Studies, s) {
			t.Errorf("study %q has a table but specs cannot name it", s)
		}
	}
}
