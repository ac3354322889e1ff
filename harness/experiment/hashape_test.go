package experiment

import (
	"path/filepath"
	"strings"
	"testing"
)

// One spec holds both shapes: an app's ha overrides the sweep's, and every
// step carries the line that set its shape, which a refusal names.
func TestAppHAOverridesTheSweepsAndKeepsItsLine(t *testing.T) {
	src := `
sweep "both" {
  duration = "30s"
  ha       = "on"
  app "on" {
    pack     = "taewa"
    variants = ["baseline"]
    rates    = [10]
  }
  app "off" {
    pack     = "taewa"
    variants = ["baseline"]
    rates    = [10]
    ha       = "off"
  }
}`
	s, err := Parse([]byte(src), "both.hcl", nodeFaultOpts())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, st := range Plan(s) {
		got[st.App] = st.HA + " " + st.HAAt
	}
	want := map[string]string{"on": "on both.hcl:4", "off": "off both.hcl:14"}
	for app, w := range want {
		if got[app] != w {
			t.Errorf("app %s: shape %q, want %q", app, got[app], w)
		}
	}

	_, err = Parse([]byte(strings.Replace(src, `ha       = "off"`, `ha       = "two"`, 1)), "both.hcl", nodeFaultOpts())
	if err == nil || !strings.Contains(err.Error(), "both.hcl:14,") || !strings.Contains(err.Error(), "Invalid ha") {
		t.Errorf("an app's bad ha: %v", err)
	}
}

// The HA sweep holds both shapes for Nomad, Swarm and Kubernetes: steady state in two
// variants and each node fault, every step with the line of its shape.
func TestHASocialNetworkSpecPlansBothShapes(t *testing.T) {
	path := filepath.Join("..", "..", "experiments", "ha-social-network.hcl")
	s, err := ParseFile(path, Options{Orchestrators: knownOrchestrators, BaseDir: filepath.Join("..", "..")})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, st := range Plan(s) {
		kind := "steady-" + st.Variant
		if st.Fault != nil {
			kind = string(st.Fault.Kind)
		}
		if !strings.HasPrefix(st.HAAt, path+":") {
			t.Errorf("step %s: its shape's line is %q", st.ID, st.HAAt)
		}
		count[st.Orchestrator+"/"+st.HA+"/"+kind]++
	}
	for _, orch := range []string{"nomad", "swarm", "kubernetes"} {
		for _, ha := range []string{HAOn, HAOff} {
			for _, kind := range []string{"steady-baseline", "steady-horizontal", "kill-node", "kill-leader"} {
				if n := count[orch+"/"+ha+"/"+kind]; n != s.Repetitions {
					t.Errorf("%s, ha %s, %s: %d steps, want %d", orch, ha, kind, n, s.Repetitions)
				}
			}
		}
	}
	if len(count) != 24 || s.Repetitions != 3 {
		t.Errorf("planned %v over %d repetitions", count, s.Repetitions)
	}
}
