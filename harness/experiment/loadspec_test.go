package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func appSpec(body string) string {
	return "sweep \"x\" {\n  duration = \"30s\"\n  warmup = \"5s\"\n  app \"taewa\" {\n    variants = [\"baseline\"]\n" + body + "  }\n}\n"
}

// requireSpecError holds err to be a spec error whose text has every want:
// the file, line and columns, the summary, the detail.
func requireSpecError(t *testing.T, err error, want []string) {
	t.Helper()
	var se *SpecError
	if !errors.As(err, &se) {
		t.Fatalf("error is %T, want *SpecError: %v", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// Each case names the field and the line:column range it must point at.
func TestLoadSpecErrorsNameFileLine(t *testing.T) {
	base := testBase(t)
	if err := os.WriteFile(filepath.Join(base, "flow.py"), []byte("# a study's flow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"bad runner", "    runner = \"k6\"\n    rates = [1]\n",
			[]string{`bad.hcl:6,14-18: Invalid runner`, `runner must be one of orchbench, fortio, locust, jmeter, artillery; got "k6"`}},
		{"jmeter open loop", "    runner = \"jmeter\"\n    rates = [1]\n",
			[]string{`bad.hcl:6,14-22: Unsupported load for runner`, "use an iterations block, not open load"}},
		{"jmeter closed loop", "    runner = \"jmeter\"\n    closed_loop {\n      users = 4\n    }\n",
			[]string{`bad.hcl:6,14-22: Unsupported load for runner`, "use an iterations block, not closed load"}},
		{"artillery closed loop", "    runner = \"artillery\"\n    closed_loop {\n      users = 4\n    }\n",
			[]string{`bad.hcl:6,14-25: Unsupported load for runner`, "not a population of users", "not closed load"}},
		{"fortio open loop", "    runner = \"fortio\"\n    rates = [1]\n",
			[]string{`bad.hcl:6,14-22: Unsupported load for runner`, "only a closed loop of users", "not open load"}},
		{"fortio think", "    runner = \"fortio\"\n    closed_loop {\n      users = 4\n      think = \"1s\"\n    }\n",
			[]string{`bad.hcl:6,14-22: Unsupported load for runner`, "no think time"}},
		{"fortio iterations", "    runner = \"fortio\"\n    iterations {\n      threads = 5\n      loops = 2\n      request { path = \"/\" }\n    }\n",
			[]string{`bad.hcl:6,14-22: Unsupported load for runner`, "not iterations load"}},
		{"no requests", "    iterations {\n      threads = 5\n      loops = 2\n    }\n",
			[]string{`bad.hcl:6,5-15: Missing requests`}},
		{"zero loops", "    iterations {\n      threads = 5\n      loops = 0\n      request { path = \"/\" }\n    }\n",
			[]string{`bad.hcl:8,15-16: Invalid loops`}},
		{"bad method", "    iterations {\n      threads = 5\n      loops = 1\n      request {\n        method = \"FETCH\"\n        path = \"/\"\n      }\n    }\n",
			[]string{`bad.hcl:10,18-25: Invalid method`, "GET, HEAD, POST"}},
		{"relative path", "    iterations {\n      threads = 5\n      loops = 1\n      request { path = \"books\" }\n    }\n",
			[]string{`bad.hcl:9,24-31: Invalid path`}},
		{"iterations and closed loop", "    closed_loop {\n      users = 1\n    }\n    iterations {\n      threads = 5\n      loops = 1\n      request { path = \"/\" }\n    }\n",
			[]string{`bad.hcl:9,5-15: Duplicate iterations block`}},
		{"bad timeout", "    timeout = \"0s\"\n    rates = [1]\n",
			[]string{`bad.hcl:6,15-19: Invalid timeout`}},
		{"zero spawn rate", "    closed_loop {\n      users = 4\n      spawn_rate = 0\n    }\n",
			[]string{`bad.hcl:8,20-21: Invalid spawn_rate`}},
		{"fortio spawn rate", "    runner = \"fortio\"\n    closed_loop {\n      users = 4\n      spawn_rate = 1\n    }\n",
			[]string{`bad.hcl:6,14-22: Unsupported load for runner`, "starts all its connections at once"}},
		{"locustfile missing", "    runner = \"locust\"\n    locustfile = \"gone.py\"\n    closed_loop {\n      users = 4\n    }\n",
			[]string{`bad.hcl:7,18-27: Locustfile not found`, "gone.py"}},
		{"locustfile for ours", "    locustfile = \"flow.py\"\n    closed_loop {\n      users = 4\n    }\n",
			[]string{`bad.hcl:6,18-27: Locustfile without Locust`, `this app's runner is "orchbench"`}},
		{"locustfile and think", "    runner = \"locust\"\n    locustfile = \"flow.py\"\n    closed_loop {\n      users = 4\n      think = \"1s\"\n    }\n",
			[]string{`bad.hcl:7,18-27: Conflicting think time`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(appSpec(c.body)), "bad.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base})
			requireSpecError(t, err, c.want)
		})
	}
}

func TestIterationsPlan(t *testing.T) {
	src := appSpec("    timeout = \"1s\"\n    iterations {\n      threads = 5\n      loops = 20\n      max_duration = \"2m\"\n" +
		"      request { path = \"/books\" }\n      request {\n        method = \"POST\"\n        path = \"/books\"\n        body = \"{}\"\n      }\n    }\n")
	s, err := Parse([]byte(src), "it.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err != nil {
		t.Fatal(err)
	}
	steps := Plan(s)
	if len(steps) != 1 {
		t.Fatalf("%d steps", len(steps))
	}
	st := steps[0]
	l := st.Load
	if st.Users != 5 || l.Kind != LoadIterations || l.Threads != 5 || l.Connections != 5 || l.Timeout != time.Second {
		t.Errorf("step %+v", st)
	}
	if st.Warmup != 0 || st.Duration != 2*time.Minute {
		t.Errorf("warm-up %s, duration %s; want none and the max_duration", st.Warmup, st.Duration)
	}
	if l.Iterations.PerUser() != 40 || l.Iterations.Requests[1] != (Request{Method: "POST", Path: "/books", Body: "{}", ContentType: "application/json"}) {
		t.Errorf("iterations %+v", l.Iterations)
	}
}

func TestFortioRunnerParses(t *testing.T) {
	s, err := Parse([]byte(appSpec("    runner = \"fortio\"\n    closed_loop {\n      users = [15, 25]\n    }\n")), "f.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Plan(s) {
		if st.Load.RunnerName() != RunnerFortio || st.Warmup != 5*time.Second {
			t.Errorf("step %s: runner %s, warm-up %s", st.ID, st.Load.RunnerName(), st.Warmup)
		}
	}
}

// A closed loop of one user has one thread whatever threads says (the
// generator refuses fewer connections than threads, as wrk does); larger
// populations keep the declared threads.
func TestClosedLoopThreadsNeverOutnumberUsers(t *testing.T) {
	s, err := Parse([]byte(appSpec("    threads = 4\n    closed_loop {\n      users = [1, 3, 10]\n    }\n")), "c.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{1: 1, 3: 3, 10: 4}
	steps := Plan(s)
	if len(steps) != 3 {
		t.Fatalf("%d steps", len(steps))
	}
	for _, st := range steps {
		if st.Load.Threads != want[st.Users] {
			t.Errorf("%s: %d threads for %d users, want %d", st.ID, st.Load.Threads, st.Users, want[st.Users])
		}
	}
}

func TestJMeterRunnerParses(t *testing.T) {
	body := "    runner = \"jmeter\"\n    timeout = \"1s\"\n    iterations {\n      threads = 5\n      loops = 20\n      request { path = \"/books\" }\n    }\n"
	s, err := Parse([]byte(appSpec(body)), "j.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Plan(s) {
		if st.Load.RunnerName() != RunnerJMeter || st.Warmup != 0 || st.Users != 5 || st.Load.Iterations.PerUser() != 20 {
			t.Errorf("step %s: runner %s, warm-up %s, %d users", st.ID, st.Load.RunnerName(), st.Warmup, st.Users)
		}
	}
}

// sweep --runner measures a spec with another tool: every app block takes
// it, the name says so, and a load the tool cannot run is refused naming
// the flag.
func TestRunnerOverride(t *testing.T) {
	base := testBase(t)
	src := "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n    variants = [\"baseline\"]\n    closed_loop {\n      users = 4\n    }\n  }\n}"
	s, err := Parse([]byte(src), "x.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base, Runner: RunnerFortio})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "x-fortio" || s.Apps[0].Load.RunnerName() != RunnerFortio {
		t.Errorf("name %q, runner %q", s.Name, s.Apps[0].Load.RunnerName())
	}
	open := "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n    variants = [\"baseline\"]\n    rates = [10]\n  }\n}"
	_, err = Parse([]byte(open), "x.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base, Runner: RunnerFortio})
	if err == nil || !strings.Contains(err.Error(), "x.hcl:3,3-14: Unsupported load for runner") || !strings.Contains(err.Error(), "(from --runner)") {
		t.Errorf("open loop under --runner fortio: %v", err)
	}
}

// Study 001's load: Locust running the spec's locustfile, its users spawned
// at a rate, beside the same flow by orchbench's generator.
func TestLocustfileAndSpawnRateParse(t *testing.T) {
	base := testBase(t)
	if err := os.WriteFile(filepath.Join(base, "flow.py"), []byte("# a study's flow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := "    runner = \"locust\"\n    locustfile = \"flow.py\"\n    closed_loop {\n      users = [1, 50]\n      spawn_rate = 2\n    }\n"
	s, err := Parse([]byte(appSpec(body)), "l.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Plan(s) {
		if st.Load.Locustfile != "flow.py" || st.Load.SpawnRate != 2 || st.Load.RunnerName() != RunnerLocust {
			t.Errorf("step %s: locustfile %q, spawn rate %g, runner %s", st.ID, st.Load.Locustfile, st.Load.SpawnRate, st.Load.RunnerName())
		}
	}
}
