package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/testutil"
)

func checker(t *testing.T) Checker {
	t.Helper()
	nomad := filepath.Join(testutil.RepoRoot(t), ".tools", "bin", "nomad")
	if _, err := os.Stat(nomad); err != nil {
		if nomad, err = exec.LookPath("nomad"); err != nil {
			t.Fatalf("the conformance test parses jobs with the pinned nomad binary: run ./justw tools (%v)", err)
		}
	}
	return Checker{Nomad: nomad}
}

// TestEveryPackConforms is the whole test an app needs: a new directory
// under packs/ is checked here with no Go written for it.
func TestEveryPackConforms(t *testing.T) {
	c := checker(t)
	dirs, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "packs", "*", "metadata.hcl"))
	if err != nil || len(dirs) < 2 {
		t.Fatalf("packs found: %v, %v", dirs, err)
	}
	// the skeleton a new app starts from conforms too
	skeleton := filepath.Join(testutil.RepoRoot(t), "docs", "skeleton", "packs", "myapp", "metadata.hcl")
	dirs = append(dirs, skeleton)
	for _, m := range dirs {
		dir := filepath.Dir(m)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			r, err := c.Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range r.Findings {
				t.Error(f)
			}
			if r.Renders < len(r.Variants)*len(r.Drivers) || r.Renders == 0 {
				t.Errorf("rendered %d combinations of variants %v and drivers %v", r.Renders, r.Variants, r.Drivers)
			}
			t.Logf("variants %v, drivers %v: %d combinations rendered and parsed by nomad", r.Variants, r.Drivers, r.Renders)
		})
	}
}

// Each convention fails on a copy of the Taewa pack broken in one place.
func TestConformanceCatchesBrokenPacks(t *testing.T) {
	c := checker(t)
	cases := []struct {
		name, file, from, to, want string
	}{
		{"vertical not twice baseline", "templates/_helpers.tpl", "$base_cores = 2.0", "$base_cores = 1.5",
			"vertical 1.5 cores, 2048 MiB is not twice baseline 1 cores, 1024 MiB"},
		{"bad variant without the list", "templates/_helpers.tpl", "valid variants are: %s", "pick another (%s)",
			`fails without listing the valid choices (want "valid variants are: ..." in the message)`},
		{"probe accepts an empty body", "templates/taewa.nomad.tpl", `orchbench_probe_min_bytes = "44"`, `orchbench_probe_min_bytes = "0"`,
			"accepts an empty answer"},
		{"horizontal is one instance", "templates/_helpers.tpl", "$count = 2", "$count = 1",
			"horizontal runs 1 instances of the measured service, baseline 1"},
		{"scale ignored", "templates/_helpers.tpl", "$count = var \"scale\" $ctx", "$count = 1",
			"(--var driver=docker --var scale=3 --var variant=baseline): task taewa/taewa runs 1 instances"},
		{"MHz not following cores", "templates/_helpers.tpl", `(mulf $cores (var "mhz_per_core" $ctx))`, `(mulf $cores 1000)`,
			"declares 1 cores but reserves 1000 MHz"},
		{"unlimited keeps a cap", "templates/_helpers.tpl", `(ternary 0 $cores (eq $variant "unlimited"))`, `$cores`,
			"of the unlimited variant has a CPU cap"},
		{"unchanged", "templates/taewa.nomad.tpl", `type     = "http"`, `type     = "http"`, ""},
		{"no health check", "templates/taewa.nomad.tpl", `      check {
        name     = "taewa-http"
        type     = "http"
        path     = "/?n=1"
        interval = "2s"
        timeout  = "1s"
      }
`, ``, "the measured service is registered without a health check"},
		{"docker quota without the hard limit", "templates/taewa.nomad.tpl", `cpu_hard_limit = [[ ne $variant "unlimited" ]]`, `cpu_hard_limit = false`,
			"declares a CPU quota, but the docker driver enforces one only with cpu_hard_limit = true"},
		{"exec whole cores not a cpuset", "templates/_helpers.tpl", `[[- $cpu_mode = "cpuset" -]]`, `[[- $cpu_mode = "unenforced" -]]`,
			"runs on exec with 1 whole cores but does not reserve them as a cpuset"},
		{"undocumented variable", "variables.hcl", `description = "Datacenters the job may be placed in."`, ``,
			`variable "datacenters" has no description`},
		{"negative scale renders", "templates/_helpers.tpl", `(and (kindIs "int" $scale) (ge $scale 0))`, `true`,
			"taewa (--var scale=-1): renders; it must fail with a message"},
		{"declares placement itself", "variables.hcl", `variable "region" {`, "variable \"placement\" {\n  type        = string\n  default     = \"spread\"\n  description = \"Where instances go.\"\n}\n\nvariable \"region\" {",
			`declares a variable "placement", which the harness takes out before rendering`},
		{"scaled service nobody registers", "templates/taewa.nomad.tpl", `    orchbench_service         = "[[ template "taewa.service_name" . ]]"`,
			`    orchbench_service         = "[[ template "taewa.service_name" . ]]"` + "\n    orchbench_scaled_service  = \"taewa-web\"",
			`declares orchbench_scaled_service "taewa-web", which no group registers in Consul`},
		{"autoscale max ignored", "templates/taewa.nomad.tpl", `      max     = [[ $as.max ]]`, `      max     = 4`,
			"the scaling policy is {Group: Min:2 Max:4"},
		{"autoscaled group is the measured one", "templates/_helpers.tpl", `[[- $_ = set . "web" (printf "%s-web" $svc) -]]`, `[[- $_ = set . "web" $svc -]]`,
			"group taewa is autoscaled and is the measured service"},
		{"resource_scale not proportional", "templates/_helpers.tpl", `[[- $cores := mulf $base_cores $rs -]]`, `[[- $cores := mulf $base_cores $rs $rs -]]`,
			"task taewa/taewa: 0.0625 cores at resource_scale 0.25 is not half of 0.25 at 0.5"},
	}
	// a second edit in the same file, where one place is not enough
	secondEdit := map[string][2]string{
		"probe accepts an empty body": {`orchbench_probe_regex     = "^The result of this run is :  "`, `orchbench_probe_regex     = "(result)?"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// the pack ships apps/taewa/server.js for exec, found beside packs/
			tmp := t.TempDir()
			dir := copyTree(t, filepath.Join(testutil.RepoRoot(t), "packs", "taewa"), filepath.Join(tmp, "packs", "taewa"))
			copyTree(t, filepath.Join(testutil.RepoRoot(t), "apps", "taewa"), filepath.Join(tmp, "apps", "taewa"))
			path := filepath.Join(dir, tc.file)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(src), tc.from) {
				t.Fatalf("%s no longer contains %q; update the case", tc.file, tc.from)
			}
			edited := strings.Replace(string(src), tc.from, tc.to, 1)
			if e, ok := secondEdit[tc.name]; ok {
				if !strings.Contains(edited, e[0]) {
					t.Fatalf("%s no longer contains %q; update the case", tc.file, e[0])
				}
				edited = strings.Replace(edited, e[0], e[1], 1)
			}
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := c.Check(dir)
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, f := range r.Findings {
				all = append(all, f.String())
			}
			if tc.want == "" {
				if len(all) != 0 {
					t.Fatalf("an unchanged pack has findings:\n%s", strings.Join(all, "\n"))
				}
				return
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Fatalf("want a finding containing %q, got:\n%s", tc.want, strings.Join(all, "\n"))
			}
		})
	}
}

func copyTree(t *testing.T, src, dst string) string {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
