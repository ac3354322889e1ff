package experiment

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// study003Phases is study 003's Artillery shape: pad, ramp, flat, pad.
const study003Phases = `    phases {
      phase { duration = "30s" }
      phase {
        duration = "60s"
        from     = 0
        to       = 1
      }
      phase {
        duration = "30s"
        rate     = 1
      }
      phase { duration = "30s" }
    }
`

func TestPhasesParseAndPlan(t *testing.T) {
	for _, runner := range []string{"orchbench", "artillery"} {
		t.Run(runner, func(t *testing.T) {
			src := appSpec("    runner = \"" + runner + "\"\n    rates = [10, 50, 100, 500]\n" + study003Phases)
			s, err := Parse([]byte(src), "p.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
			if err != nil {
				t.Fatal(err)
			}
			want := []Phase{{Duration: 30 * time.Second}, {Duration: time.Minute, To: 1}, {Duration: 30 * time.Second, From: 1, To: 1}, {Duration: 30 * time.Second}}
			if got := s.Apps[0].Load.Phases; !reflect.DeepEqual(got, want) {
				t.Fatalf("phases %+v, want %+v", got, want)
			}
			steps := Plan(s)
			if len(steps) != 4 {
				t.Fatalf("%d steps", len(steps))
			}
			for _, st := range steps {
				// the phases are the whole run: no warm-up, their 150 s measured
				if st.Warmup != 0 || st.Duration != 150*time.Second {
					t.Errorf("%s: warm-up %s, duration %s; want 0 and 2m30s", st.ID, st.Warmup, st.Duration)
				}
				if st.PeakRPS() != st.OfferedRPS {
					t.Errorf("%s: peak %g, want the rate %g", st.ID, st.PeakRPS(), st.OfferedRPS)
				}
			}
			var out bytes.Buffer
			if err := FormatPlan(&out, s, steps); err != nil {
				t.Fatal(err)
			}
			line := "phases 30s@0,1m0s@0->100,30s@100,30s@0 (6000 requests, mean 40.0 rps over 2m30s)"
			if !strings.Contains(out.String(), line) {
				t.Errorf("plan does not show the r100 phases as %q:\n%s", line, out.String())
			}
			if !strings.Contains(out.String(), "app taewa: no warm-up, measured over its 2m30s of phases") {
				t.Errorf("plan does not say the phases replace the warm-up and duration:\n%s", out.String())
			}
			if runner == "artillery" && !strings.Contains(out.String(), "(artillery)") {
				t.Errorf("plan does not name the runner:\n%s", out.String())
			}
		})
	}
}

// The expected count is the integral of the phases: a ramp offers half its
// peak on average, a pad nothing.
func TestExpectedRequestsIsTheIntegralOfThePhases(t *testing.T) {
	study := []Phase{{Duration: 30 * time.Second}, {Duration: time.Minute, To: 1}, {Duration: 30 * time.Second, From: 1, To: 1}, {Duration: 30 * time.Second}}
	for _, c := range []struct {
		phases []Phase
		rate   float64
		want   float64
	}{
		{study, 10, 60*10/2 + 30*10},    // 600
		{study, 500, 60*500/2 + 30*500}, // 30000
		{[]Phase{{Duration: 10 * time.Second, From: 1, To: 1}}, 7, 70},
		{[]Phase{{Duration: 10 * time.Second, From: 1, To: 0.5}}, 100, 750},
		{[]Phase{{Duration: 1500 * time.Millisecond, From: 2, To: 2}}, 10, 30},
		{[]Phase{{Duration: 5 * time.Second}}, 100, 0},
	} {
		if got := ExpectedRequests(c.phases, c.rate); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("ExpectedRequests(%v, %g) = %g, want %g", c.phases, c.rate, got, c.want)
		}
	}
	if d := PhasesDuration(study); d != 150*time.Second {
		t.Errorf("duration %s", d)
	}
	if p := PeakFactor([]Phase{{From: 0.5, To: 2}, {From: 1, To: 1}}); p != 2 {
		t.Errorf("peak %g", p)
	}
	if got := PhasesText(study, 50); got != "30s@0,1m0s@0->50,30s@50,30s@0" {
		t.Errorf("text %q", got)
	}
}

// Bad phases name the file, line and columns of what is wrong.
func TestPhasesErrorsNameFileLine(t *testing.T) {
	base := testBase(t)
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"negative duration", "    rates = [10]\n    phases {\n      phase { duration = \"-5s\" }\n    }\n",
			[]string{`bad.hcl:8,26-31: Invalid duration`, "must not be negative"}},
		{"zero duration", "    rates = [10]\n    phases {\n      phase {\n        duration = \"0s\"\n        rate = 1\n      }\n    }\n",
			[]string{`bad.hcl:9,20-24: Invalid duration`, "must be positive"}},
		{"negative from", "    rates = [10]\n    phases {\n      phase {\n        duration = \"5s\"\n        from = -1\n        to = 1\n      }\n    }\n",
			[]string{`bad.hcl:10,16-18: Invalid from`, "0 or more, got -1"}},
		{"negative to", "    rates = [10]\n    phases {\n      phase {\n        duration = \"5s\"\n        from = 0\n        to = -2\n      }\n    }\n",
			[]string{`bad.hcl:11,14-16: Invalid to`, "0 or more, got -2"}},
		{"from without to", "    rates = [10]\n    phases {\n      phase {\n        duration = \"5s\"\n        from = 1\n      }\n    }\n",
			[]string{`bad.hcl:8,7-12: Incomplete ramp`}},
		{"rate and ramp", "    rates = [10]\n    phases {\n      phase {\n        duration = \"5s\"\n        rate = 1\n        to = 2\n      }\n    }\n",
			[]string{`bad.hcl:10,16-17: Conflicting phase rate`}},
		{"no rates", "    closed_loop {\n      users = 4\n    }\n    phases {\n      phase {\n        duration = \"5s\"\n        rate = 1\n      }\n    }\n",
			[]string{`bad.hcl:9,5-11: Conflicting load`, "a closed_loop block has users"}},
		{"with iterations", "    iterations {\n      threads = 2\n      loops = 1\n      request { path = \"/\" }\n    }\n    phases {\n      phase {\n        duration = \"5s\"\n        rate = 1\n      }\n    }\n",
			[]string{`bad.hcl:11,5-11: Conflicting load`, "an iterations block has users"}},
		{"without rates", "    phases {\n      phase {\n        duration = \"5s\"\n        rate = 1\n      }\n    }\n",
			[]string{`bad.hcl:6,5-11: Missing rates`, "phases are relative to each step's rate"}},
		{"only pads", "    rates = [10]\n    phases {\n      phase { duration = \"5s\" }\n    }\n",
			[]string{`bad.hcl:7,5-11: Phases send nothing`}},
		{"too long", "    rates = [10]\n    phases {\n      phase {\n        duration = \"20h\"\n        rate = 1\n      }\n      phase { duration = \"5h\" }\n    }\n",
			[]string{`bad.hcl:7,5-11: Phases too long`, "more than 24h0m0s"}},
		{"empty", "    rates = [10]\n    phases {\n    }\n",
			[]string{`bad.hcl:7,5-11: Missing phases`}},
		{"two blocks", "    rates = [10]\n    phases {\n      phase {\n        duration = \"5s\"\n        rate = 1\n      }\n    }\n    phases {\n      phase { duration = \"5s\" }\n    }\n",
			[]string{`bad.hcl:13,5-11: Duplicate phases block`}},
		{"artillery half seconds", "    runner = \"artillery\"\n    rates = [10]\n    phases {\n      phase {\n        duration = \"1500ms\"\n        rate = 1\n      }\n    }\n",
			[]string{`bad.hcl:6,14-25: Unsupported phases for runner`, "phase 1 lasts 1.5s"}},
		{"artillery fractional arrivals", "    runner = \"artillery\"\n    rates = [10, 15]\n    phases {\n      phase {\n        duration = \"10s\"\n        rate = 0.5\n      }\n    }\n",
			[]string{`bad.hcl:6,14-25: Unsupported rate for runner`, "at rate 15 phase 1 asks 7.5/s"}},
		{"artillery iterations", "    runner = \"artillery\"\n    iterations {\n      threads = 2\n      loops = 1\n      request { path = \"/\" }\n    }\n",
			[]string{`bad.hcl:6,14-25: Unsupported load for runner`, "not iterations load"}},
		{"artillery script", "    runner = \"artillery\"\n    rates = [10]\n    workload = \"hotel-mixed\"\n",
			[]string{`bad.hcl:6,14-25: Unsupported load for runner`, "sends one request path"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(appSpec(c.body)), "bad.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base})
			requireSpecError(t, err, c.want)
		})
	}
}

// Artillery with plain rates runs one flat phase at each (warm-up first, as
// the other tools), and its plan line names it.
func TestArtilleryRunnerWithPlainRates(t *testing.T) {
	s, err := Parse([]byte(appSpec("    runner = \"artillery\"\n    rates = [10, 20]\n")), "a.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Plan(s) {
		if st.Load.RunnerName() != RunnerArtillery || st.Warmup != 5*time.Second || st.Duration != 30*time.Second || len(st.Load.Phases) != 0 {
			t.Errorf("step %s: %+v", st.ID, st)
		}
	}
}
