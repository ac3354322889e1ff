package experiment

import (
	"strings"
	"testing"
	"time"
)

const stepUpPhases = `    rates = [400]
    phases {
      phase {
        duration = "30s"
        rate     = 0.1
      }
      phase {
        duration = "150s"
        rate     = 1
      }
    }
`

func TestAutoscaleBlockSetsThePackVariableAndRedeploysEveryStep(t *testing.T) {
	src := strings.Replace(appSpec(stepUpPhases+"    autoscale {\n      min = 1\n      max = 4\n      settle = \"90s\"\n    }\n"), "  duration = \"30s\"\n", "  duration = \"30s\"\n  repetitions = 3\n", 1)
	s, err := Parse([]byte(src), "a.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := Autoscale{Min: 1, Max: 4, TargetCPU: 0.7, Cooldown: 30 * time.Second, Evaluation: 10 * time.Second, Settle: 90 * time.Second}
	if a := s.Apps[0].Autoscale; a == nil || *a != want {
		t.Fatalf("autoscale %+v, want %+v", a, want)
	}
	steps := Plan(s)
	if len(steps) != 3 {
		t.Fatalf("%d steps, want 3", len(steps))
	}
	for _, st := range steps {
		if !st.Redeploy || st.Autoscale == nil {
			t.Errorf("%s: redeploy %v, autoscale %v; every scaling step deploys afresh with the policy", st.ID, st.Redeploy, st.Autoscale)
		}
		v, _ := st.Vars["autoscale"].(map[string]any)
		if v["enabled"] != true || v["max"] != 4.0 || v["cooldown"] != "30s" {
			t.Errorf("%s: pack variable autoscale = %v", st.ID, st.Vars["autoscale"])
		}
	}
	if got := StepUpAt(s.Apps[0].Load.Phases); got != 30*time.Second {
		t.Errorf("step up at %s, want 30s", got)
	}
}

func TestAutoscaleErrorsNameFileLine(t *testing.T) {
	base := testBase(t)
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"no phases", "    rates = [400]\n    autoscale {\n      min = 1\n      max = 4\n    }\n",
			[]string{`bad.hcl:7,5-14: Missing phases`, "a load that steps up"}},
		{"flat phases", "    rates = [400]\n    phases {\n      phase {\n        duration = \"60s\"\n        rate = 1\n      }\n    }\n    autoscale {\n      min = 1\n      max = 4\n      settle = \"30s\"\n    }\n",
			[]string{`Phases do not step up`}},
		{"max below min", stepUpPhases + "    autoscale {\n      min = 3\n      max = 2\n    }\n",
			[]string{`bad.hcl:19,13-14: Invalid max`, "max (2) must be at least min (3)"}},
		{"target above 1", stepUpPhases + "    autoscale {\n      min = 1\n      max = 2\n      target_cpu = 70\n    }\n",
			[]string{`Invalid target_cpu`, "at most 1, got 70"}},
		{"settle past the end", stepUpPhases + "    autoscale {\n      min = 1\n      max = 2\n      settle = \"10m\"\n    }\n",
			[]string{`Settle too long`, "past their end (3m0s)"}},
		{"iterations", "    iterations {\n      threads = 2\n      loops = 1\n      request { path = \"/\" }\n    }\n    autoscale {\n      min = 1\n      max = 2\n    }\n",
			[]string{`Conflicting load`, "an iterations block ends when its users have looped"}},
		{"missing max", stepUpPhases + "    autoscale {\n      min = 1\n    }\n",
			[]string{`Missing required argument`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(appSpec(c.body)), "bad.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base})
			requireSpecError(t, err, c.want)
		})
	}
}
