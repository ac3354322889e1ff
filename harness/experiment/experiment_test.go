package experiment

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/testenv"
)

// knownOrchestrators are what the orchbench binary registers (its own test
// checks that); the parser takes them as an option, so this test binary
// does not link the adapters and their clients.
var knownOrchestrators = []string{"kubernetes", "nomad", "swarm"}

// writePack creates packs/<name>/variables.hcl following the variant convention.
func writePack(t *testing.T, base, name, variants string) {
	t.Helper()
	dir := filepath.Join(base, "packs", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := `variable "resource_scale" {
  type    = number
  default = 1
}

variable "variant" {
  description = "Which deployment shape to run. One of: ` + variants + `."
  type        = string
  default     = "baseline"
  validation {
    condition     = true
    error_message = "unused"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "variables.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func testBase(t *testing.T) string {
	base := t.TempDir()
	writePack(t, base, "taewa", "baseline, vertical, horizontal, unlimited")
	writePack(t, base, "social", "baseline, horizontal")
	return base
}

func TestParseDemoSpec(t *testing.T) {
	base := testBase(t)
	s, err := ParseFile(filepath.Join("..", "..", "experiments", "demo.hcl"), Options{Orchestrators: knownOrchestrators, BaseDir: base})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "demo" || s.Seed != 42 || s.SeedGenerated || s.Repetitions != 2 || s.Deploy != DeployPerConfiguration || !s.EarlyStop {
		t.Fatalf("sweep header wrong: %+v", s)
	}
	if s.Warmup != 3*time.Second || s.Duration != 8*time.Second || s.Cooldown != time.Second {
		t.Fatalf("durations wrong: %v %v %v", s.Warmup, s.Duration, s.Cooldown)
	}
	if want := (SLO{P99Ms: 250, MinAchievedRatio: 0.95, MaxErrorRatio: 0.01}); s.SLO != want {
		t.Fatalf("slo = %+v, want %+v", s.SLO, want)
	}
	if len(s.Apps) != 2 {
		t.Fatalf("apps = %d", len(s.Apps))
	}
	// the second app measures the baseline with the node agent stopped
	if q := s.Apps[1]; q.Pack != "taewa" || q.Shipping != ShippingOff || s.Apps[0].Shipping != "" {
		t.Fatalf("shipping: %+v", s.Apps)
	}
	off := 0
	for _, st := range Plan(s) {
		if st.ShippingOff() != (st.App == "taewa-unshipped") {
			t.Errorf("step %s: shipping %q", st.ID, st.Shipping)
		}
		if st.ShippingOff() {
			off++
		}
	}
	if off != 4 {
		t.Errorf("%d steps with shipping off, want 4", off)
	}
	a := s.Apps[0]
	if a.Pack != "taewa" || !reflect.DeepEqual(a.Variants, []string{"baseline", "vertical"}) ||
		!reflect.DeepEqual(a.Rates, []float64{50, 100, 200, 400}) {
		t.Fatalf("app wrong: %+v", a)
	}
	if !reflect.DeepEqual(a.Load, Load{Kind: LoadOpen, Threads: 2, Connections: 16, Distribution: "exp"}) {
		t.Fatalf("load = %+v", a.Load)
	}
	if a.Vars["resource_scale"] != 0.25 {
		t.Fatalf("vars = %#v", a.Vars)
	}
	if !strings.Contains(s.Source, `sweep "demo"`) {
		t.Fatal("source not kept")
	}
}

func TestParseAlternatives(t *testing.T) {
	base := testBase(t)
	src := `
sweep "alt" {
  duration = "10s"
  deploy   = "per-step"
  app "taewa" {
    variants     = ["baseline", "vertical"]
    vars         = { resource_scale = 1, replicas = 2 }
    variant_vars = { vertical = { resource_scale = 2, tag = "x" } }
    rates_from   = 100
    rates_to     = 500
    rates_step   = 200
  }
  app "social" {
    variants = ["horizontal"]
    closed_loop {
      users = [16, 4]
      think = "100ms"
    }
  }
}`
	now := time.Unix(1700000000, 5)
	s, err := Parse([]byte(src), "alt.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if !s.SeedGenerated || s.Seed != uint64(now.UnixNano()) {
		t.Fatalf("seed not generated from clock: %d %v", s.Seed, s.SeedGenerated)
	}
	if s.Repetitions != 1 || s.SLO.MinAchievedRatio != 0.95 || s.SLO.MaxErrorRatio != 0.01 || s.SLO.P99Ms != 0 {
		t.Fatalf("defaults wrong: %+v", s)
	}
	if !reflect.DeepEqual(s.Apps[0].Rates, []float64{100, 300, 500}) {
		t.Fatalf("range rates = %v", s.Apps[0].Rates)
	}
	c := s.Apps[1]
	if c.Load.Kind != LoadClosed || !reflect.DeepEqual(c.Users, []int{4, 16}) || c.Load.Think != 100*time.Millisecond {
		t.Fatalf("closed loop = %+v", c)
	}
	steps := Plan(s)
	if len(steps) != 3*2+2 {
		t.Fatalf("steps = %d", len(steps))
	}
	for _, st := range steps {
		if !st.Redeploy {
			t.Fatalf("per-step deploy but %s does not redeploy", st.ID)
		}
		switch st.ID {
		case "taewa-nomad-vertical-r300-rep1":
			want := map[string]any{"resource_scale": int64(2), "replicas": int64(2), "tag": "x", "variant": "vertical"}
			if !reflect.DeepEqual(st.Vars, want) {
				t.Fatalf("merged vars = %#v", st.Vars)
			}
		case "taewa-nomad-baseline-r300-rep1":
			if st.Vars["resource_scale"] != int64(1) || st.Vars["variant"] != "baseline" {
				t.Fatalf("baseline vars = %#v", st.Vars)
			}
		case "social-nomad-horizontal-u16-rep1":
			if st.Users != 16 || st.OfferedRPS != 0 || st.Load.Kind != LoadClosed {
				t.Fatalf("closed step = %+v", st)
			}
		}
	}
}

// Each case names the field and the line:column range it must point at.
func TestParseErrorsNameFileLineField(t *testing.T) {
	base := testBase(t)
	cases := []struct {
		name, src string
		want      []string
	}{
		{"syntax", "sweep \"x\" {\n  duration = \n}", []string{"bad.hcl:2,"}},
		{"unknown field", "sweep \"x\" {\n  duration = \"1s\"\n  durashun = \"2s\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n}",
			[]string{`bad.hcl:3,3-11: Unsupported argument`, `"durashun"`}},
		{"bad duration", "sweep \"x\" {\n  duration = \"ten\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n}",
			[]string{`bad.hcl:2,14-19: Invalid duration`}},
		{"wrong type", "sweep \"x\" {\n  duration = \"1s\"\n  repetitions = \"many\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n}",
			[]string{`bad.hcl:3,18-22`, "number"}},
		{"unknown pack", "sweep \"x\" {\n  duration = \"1s\"\n  app \"nope\" {\n    variants = [\"baseline\"]\n    rates = [1]\n  }\n}",
			[]string{`bad.hcl:3,7-13: Unknown pack`, "available: social, taewa"}},
		{"unknown variant", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n    variants = [\"baseline\", \"diagonal\"]\n    rates = [1]\n  }\n}",
			[]string{`bad.hcl:4,16-40: Unknown variant`, `"diagonal"`, "valid: baseline, vertical, horizontal, unlimited"}},
		{"unknown orchestrator", "sweep \"x\" {\n  duration = \"1s\"\n  orchestrators = [\"mesos\"]\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n}",
			[]string{`bad.hcl:3,19-28: Unknown orchestrator`, `"mesos" is not an orchestrator of this build`, "valid: kubernetes, nomad, swarm"}},
		{"duplicate orchestrator", "sweep \"x\" {\n  duration = \"1s\"\n  orchestrators = [\"nomad\", \"nomad\"]\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n}",
			[]string{`bad.hcl:3,19-37: Duplicate orchestrator`, `"nomad" is listed twice`}},
		{"no levels", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n    variants = [\"baseline\"]\n  }\n}",
			[]string{`bad.hcl:3,3-14: Missing load levels`}},
		{"two level kinds", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n    variants = [\"baseline\"]\n    rates = [1]\n    closed_loop {\n      users = 3\n    }\n  }\n}",
			[]string{`bad.hcl:3,3-14: Conflicting load levels`}},
		{"missing duration", "sweep \"x\" {\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n}",
			[]string{`bad.hcl:1,11-11: Missing required argument`, `"duration"`}},
		{"bad slo", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n  slo {\n    max_error_ratio = 2\n  }\n}",
			[]string{`bad.hcl:8,23-24: Invalid max_error_ratio`}},
		{"variant_vars for absent variant", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n variant_vars = { vertical = { a = 1 } }\n rates=[1]\n }\n}",
			[]string{`bad.hcl:5,17-41: Unknown variant in variant_vars`}},
		{"unknown study", "sweep \"x\" {\n  duration = \"1s\"\n  study = \"002\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n }\n}",
			[]string{`bad.hcl:3,11-16: Unknown study`, `"002" is not a study whose headline table orchbench regenerates; valid: 000, 001, 003, 004`}},
		{"negative rate", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1, -5]\n }\n}",
			[]string{`bad.hcl:5,8-15: Invalid rate`}},
		{"unknown placement", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n vars = { placement = \"scattered\" }\n rates=[1]\n }\n}",
			[]string{`bad.hcl:5,9-36: Invalid vars`, `placement = "scattered": not a placement; valid: scheduler, spread, packed`}},
		{"placement not a string", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n variant_vars = { baseline = { placement = 3 } }\n rates=[1]\n }\n}",
			[]string{`Invalid variant_vars`, `variant_vars.baseline: placement must be a string`}},
		{"no variants anywhere", "sweep \"x\" {\n  duration = \"1s\"\n  app_defaults {\n    rates = [1]\n  }\n  app \"taewa\" {\n  }\n}",
			[]string{`bad.hcl:6,3-14: Missing required argument`, `"variants" is required, in the app block or in app_defaults`}},
		{"a default's error points at app_defaults", "sweep \"x\" {\n  duration = \"1s\"\n  app_defaults {\n    variants = [\"diagonal\"]\n    rates = [1]\n  }\n  app \"taewa\" {\n  }\n}",
			[]string{`bad.hcl:4,16-28: Unknown variant`, `"diagonal"`}},
		{"two app_defaults", "sweep \"x\" {\n  duration = \"1s\"\n  app_defaults {\n    rates = [1]\n  }\n  app_defaults {\n    rates = [2]\n  }\n  app \"taewa\" {\n    variants = [\"baseline\"]\n  }\n}",
			[]string{`bad.hcl:6,3-15: Duplicate app_defaults block`}},
		{"bad shipping", "sweep \"x\" {\n  duration = \"1s\"\n  app \"taewa\" {\n variants=[\"baseline\"]\n rates=[1]\n shipping = \"of\"\n }\n}",
			[]string{`bad.hcl:6,13-17: Invalid shipping`, `shipping must be "on" or "off", got "of"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), "bad.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base})
			if err == nil {
				t.Fatal("no error")
			}
			requireSpecError(t, err, c.want)
		})
	}
}

func TestParseReportsEveryError(t *testing.T) {
	base := testBase(t)
	src := "sweep \"x\" {\n  duration = \"1s\"\n  deploy = \"sometimes\"\n  app \"taewa\" {\n    variants = [\"nope\"]\n    rates = [1]\n  }\n}"
	_, err := Parse([]byte(src), "bad.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base})
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "bad.hcl:3,") || !strings.HasPrefix(lines[1], "bad.hcl:5,") {
		t.Fatalf("want two located errors, got:\n%s", err)
	}
}

func demoSweep(t *testing.T, seed uint64, deploy string, early bool) *Sweep {
	t.Helper()
	return &Sweep{
		Name: "d", Seed: seed, Repetitions: 3, Deploy: deploy, EarlyStop: early,
		Duration: time.Second, Orchestrators: []string{"nomad"},
		Apps: []App{
			{Name: "taewa", Pack: "taewa", Variants: []string{"baseline", "vertical", "horizontal"}, Rates: []float64{100, 200, 400, 800}, Load: Load{Kind: LoadOpen, Threads: 1, Connections: 1}},
			{Name: "social", Pack: "social", Variants: []string{"baseline"}, Rates: []float64{50, 75}, Load: Load{Kind: LoadOpen, Threads: 1, Connections: 1}},
		},
	}
}

func ids(steps []Step) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.ID
	}
	return out
}

func TestPlanCoverageAndDeterminism(t *testing.T) {
	for _, deploy := range []string{DeployPerConfiguration, DeployPerStep} {
		for _, early := range []bool{false, true} {
			s := demoSweep(t, 42, deploy, early)
			a, b := Plan(s), Plan(s)
			if !reflect.DeepEqual(ids(a), ids(b)) {
				t.Fatalf("%s early=%v: same seed, different order", deploy, early)
			}
			other := demoSweep(t, 43, deploy, early)
			if reflect.DeepEqual(ids(a), ids(Plan(other))) {
				t.Fatalf("%s early=%v: seed does not change the order", deploy, early)
			}
			// Every cell of the matrix exactly once.
			want := map[string]bool{}
			for _, app := range s.Apps {
				for _, v := range app.Variants {
					for _, r := range app.Rates {
						for rep := 1; rep <= s.Repetitions; rep++ {
							want[StepID(app.Name, "nomad", v, r, 0, rep)] = true
						}
					}
				}
			}
			if len(a) != len(want) {
				t.Fatalf("%d steps, want %d", len(a), len(want))
			}
			for i, st := range a {
				if !want[st.ID] {
					t.Fatalf("unexpected or repeated step %s", st.ID)
				}
				delete(want, st.ID)
				if st.Index != i {
					t.Fatalf("index %d at position %d", st.Index, i)
				}
			}
			checkOrderConstraints(t, s, a)
		}
	}
}

func checkOrderConstraints(t *testing.T, s *Sweep, steps []Step) {
	t.Helper()
	deploys := 0
	for _, st := range steps {
		if st.Redeploy {
			deploys++
		}
	}
	if s.Deploy == DeployPerStep && deploys != len(steps) {
		t.Fatalf("per-step: %d deploys for %d steps", deploys, len(steps))
	}
	if s.Deploy == DeployPerConfiguration {
		if deploys != 4 {
			t.Fatalf("per-configuration: %d deploys, want 4", deploys)
		}
		// Configuration blocks are contiguous and start with the deploy.
		seen := map[string]bool{}
		for i, st := range steps {
			if i == 0 || st.Configuration() != steps[i-1].Configuration() {
				if seen[st.Configuration()] || !st.Redeploy {
					t.Fatalf("configuration %s not contiguous", st.Configuration())
				}
				seen[st.Configuration()] = true
			}
		}
	}
	if s.EarlyStop {
		// Within a configuration: rounds by repetition, rates ascending.
		last := map[string]Step{}
		for _, st := range steps {
			if p, ok := last[st.Configuration()]; ok {
				if st.Rep < p.Rep || (st.Rep == p.Rep && st.OfferedRPS <= p.OfferedRPS) {
					t.Fatalf("early stop order broken: %s after %s", st.ID, p.ID)
				}
			}
			last[st.Configuration()] = st
		}
	}
}

func TestPlanPerStepInterleavesConfigurations(t *testing.T) {
	steps := Plan(demoSweep(t, 7, DeployPerStep, true))
	switches := 0
	for i := 1; i < len(steps); i++ {
		if steps[i].Configuration() != steps[i-1].Configuration() {
			switches++
		}
	}
	if switches < len(steps)/3 {
		t.Fatalf("per-step shuffle barely interleaves: %d switches in %d steps", switches, len(steps))
	}
}

func TestFormatPlan(t *testing.T) {
	s := demoSweep(t, 42, DeployPerConfiguration, true)
	s.File = "x.hcl"
	steps := Plan(s)
	var b bytes.Buffer
	if err := FormatPlan(&b, s, steps); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"sweep d (x.hcl)", "seed 42", "42 steps, 4 deployments", steps[0].ID, "100 rps"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan text lacks %q:\n%s", w, out)
		}
	}
}

func TestPackVariantsErrors(t *testing.T) {
	base := testBase(t)
	list := PackVariants(filepath.Join(base, "packs"))
	got, err := list("taewa")
	if err != nil || !reflect.DeepEqual(got, []string{"baseline", "vertical", "horizontal", "unlimited"}) {
		t.Fatalf("taewa variants = %v, %v", got, err)
	}
	if _, err := list("missing"); err == nil || !strings.Contains(err.Error(), "available: social, taewa") {
		t.Fatalf("missing pack error = %v", err)
	}
	dir := filepath.Join(base, "packs", "odd")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "variables.hcl"), []byte(`variable "variant" { description = "free text" }`), 0o644)
	if _, err := list("odd"); err == nil || !strings.Contains(err.Error(), "One of:") {
		t.Fatalf("convention error = %v", err)
	}
}

func TestPackVariantsFromValidateHelper(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "packs", "app")
	os.MkdirAll(filepath.Join(dir, "templates"), 0o755)
	os.WriteFile(filepath.Join(dir, "variables.hcl"), []byte(`variable "variant" {
  description = "Resource shape: baseline (1 core) or vertical (2 cores)."
}`), 0o644)
	os.WriteFile(filepath.Join(dir, "templates", "_helpers.tpl"), []byte(`[[- define "app.validate" -]]
[[- $variants := list "baseline" "vertical" -]]
[[- end -]]`), 0o644)
	got, err := PackVariants(filepath.Join(base, "packs"))("app")
	if err != nil || !reflect.DeepEqual(got, []string{"baseline", "vertical"}) {
		t.Fatalf("variants = %v, %v", got, err)
	}
}

// The repository's own packs must be readable by the default lister.
func TestRepositoryPacks(t *testing.T) {
	packs := filepath.Join("..", "..", "packs")
	if _, err := os.Stat(filepath.Join(packs, "taewa")); err != nil {
		testenv.Missing(t, "packs/taewa not in this checkout")
	}
	got, err := PackVariants(packs)("taewa")
	if err != nil || !reflect.DeepEqual(got, []string{"baseline", "vertical", "horizontal", "unlimited"}) {
		t.Fatalf("taewa variants = %v, %v", got, err)
	}
	if _, err := ParseFile(filepath.Join("..", "..", "experiments", "demo.hcl"), Options{Orchestrators: knownOrchestrators, BaseDir: filepath.Join("..", "..")}); err != nil {
		t.Fatalf("demo.hcl against the real packs: %v", err)
	}
}

func TestProbeBlock(t *testing.T) {
	src := `
sweep "p" {
  duration = "5s"
  app "taewa" {
    variants = ["baseline"]
    rates    = [10]
    probe {
      path      = "/?n=5"
      min_bytes = 44
      regex     = "^The"
    }
  }
}`
	s, err := Parse([]byte(src), "p.hcl", Options{Orchestrators: knownOrchestrators, ListVariants: func(string) ([]string, error) { return []string{"baseline"}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	steps := Plan(s)
	if steps[0].Probe == nil || steps[0].Probe.Path != "/?n=5" || steps[0].Probe.MinBytes != 44 || steps[0].Probe.Status != 200 {
		t.Fatalf("probe not carried into the plan: %+v", steps[0].Probe)
	}
	_, err = Parse([]byte(strings.Replace(src, `"^The"`, `"(["`, 1)), "p.hcl", Options{Orchestrators: knownOrchestrators, ListVariants: func(string) ([]string, error) { return []string{"baseline"}, nil }})
	if err == nil || !strings.Contains(err.Error(), "p.hcl:10,") || !strings.Contains(err.Error(), "Invalid probe regex") {
		t.Fatalf("a bad regex must name file and line: %v", err)
	}
}

func TestFaultBlock(t *testing.T) {
	src := `
sweep "f" {
  duration = "10s"
  app "taewa" {
    variants = ["baseline"]
    rates    = [10]
    fault {
      kind  = "kill-task"
      after = "3s"
    }
  }
}`
	opts := Options{Orchestrators: knownOrchestrators, ListVariants: func(string) ([]string, error) { return []string{"baseline"}, nil }}
	s, err := Parse([]byte(src), "f.hcl", opts)
	if err != nil {
		t.Fatal(err)
	}
	if f := Plan(s)[0].Fault; f == nil || f.Kind != "kill-task" || f.After != 3*time.Second {
		t.Fatalf("fault not carried into the plan: %+v", f)
	}
	_, err = Parse([]byte(strings.Replace(src, `"kill-task"`, `"reboot"`, 1)), "f.hcl", opts)
	if err == nil || !strings.Contains(err.Error(), "f.hcl:8,") || !strings.Contains(err.Error(), "valid: kill-task, replace-instance") {
		t.Fatalf("an unknown fault must name file, line and the valid kinds: %v", err)
	}
	// a spec written before replace-instance had its name still runs it
	s, err = Parse([]byte(strings.Replace(src, `"kill-task"`, `"stop-alloc"`, 1)), "f.hcl", opts)
	if err != nil {
		t.Fatal(err)
	}
	if f := Plan(s)[0].Fault; f.Kind != orchestrator.FaultReplaceInstance {
		t.Errorf("stop-alloc planned as %q", f.Kind)
	}
}

// The specs of the orchestrator comparison parse and plan the same steps on
// every orchestrator they name.
func TestOrchestratorSpecs(t *testing.T) {
	for _, name := range []string{"orchestrators-taewa.hcl", "orchestrators-social-network.hcl", "orchestrators-social-network-quick.hcl"} {
		s, err := ParseFile(filepath.Join("..", "..", "experiments", name), Options{Orchestrators: knownOrchestrators, BaseDir: filepath.Join("..", "..")})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, st := range Plan(s) {
			seen[st.Orchestrator]++
		}
		if len(seen) != len(s.Orchestrators) || len(seen) < 2 {
			t.Errorf("%s plans steps on %v, want every one of %v", name, seen, s.Orchestrators)
		}
		for o, n := range seen {
			if n != seen["nomad"] {
				t.Errorf("%s plans %d steps on %s, %d on nomad", name, n, o, seen["nomad"])
			}
		}
	}
}

// app_defaults holds what the apps share; each app's own attributes and
// blocks win, and vars merge key by key.
func TestAppDefaults(t *testing.T) {
	src := `sweep "faults" {
  duration = "10s"
  app_defaults {
    pack     = "taewa"
    variants = ["baseline"]
    vars     = { resource_scale = 0.25, job_name = "shared" }
    rates    = [40]
    threads  = 1
    closed_loop {
      users = 4
    }
  }
  app "kill" {
    vars  = { job_name = "kill" }
    fault {
      kind    = "kill-task"
      service = "taewa"
      after   = "2s"
    }
  }
  app "steady" {
    rates = [80]
  }
}
`
	s, err := Parse([]byte(src), "d.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err == nil {
		t.Fatal("rates (from app_defaults) and closed_loop (from app_defaults) together must conflict in app steady")
	}
	if !strings.Contains(err.Error(), "Conflicting load levels") {
		t.Fatalf("want the conflict, got %v", err)
	}
	src = strings.Replace(src, "    closed_loop {\n      users = 4\n    }\n", "", 1)
	s, err = Parse([]byte(src), "d.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: testBase(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Apps) != 2 {
		t.Fatalf("apps: %+v", s.Apps)
	}
	kill, steady := s.Apps[0], s.Apps[1]
	if kill.Pack != "taewa" || !reflect.DeepEqual(kill.Variants, []string{"baseline"}) || kill.Load.Threads != 1 {
		t.Fatalf("kill did not take the defaults: %+v", kill)
	}
	if want := map[string]any{"resource_scale": 0.25, "job_name": "kill"}; !reflect.DeepEqual(kill.Vars, want) {
		t.Fatalf("kill's vars = %#v, want the defaults' with its own job_name", kill.Vars)
	}
	if kill.Fault == nil || steady.Fault != nil {
		t.Fatalf("the fault is kill's own: kill %+v, steady %+v", kill.Fault, steady.Fault)
	}
	if !reflect.DeepEqual(kill.Rates, []float64{40}) || !reflect.DeepEqual(steady.Rates, []float64{80}) {
		t.Fatalf("rates: kill %v (default 40), steady %v (its own 80)", kill.Rates, steady.Rates)
	}
	if want := map[string]any{"resource_scale": 0.25, "job_name": "shared"}; !reflect.DeepEqual(steady.Vars, want) {
		t.Fatalf("steady's vars = %#v", steady.Vars)
	}
}
