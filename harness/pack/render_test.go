package pack

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadFixture(t *testing.T, name string) *Pack {
	t.Helper()
	p, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	return p
}

func mustRender(t *testing.T, p *Pack, overrides map[string]string, varFiles ...string) *Rendered {
	t.Helper()
	r, err := p.Render(overrides, varFiles)
	if err != nil {
		t.Fatalf("Render(%v): %v", overrides, err)
	}
	return r
}

func wantContains(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("want %q in:\n%s", w, text)
		}
	}
}

func TestRenderDefaultsAndDataForms(t *testing.T) {
	p := loadFixture(t, "features")
	if p.Name != "features" || p.Metadata["pack"]["version"] != "1.2.3" {
		t.Fatalf("metadata not read: name %q, metadata %v", p.Name, p.Metadata)
	}
	r := mustRender(t, p, nil)
	job := r.Files["features.nomad"]
	wantContains(t, job,
		`job "features-hello" {`,
		`datacenters = ["dc1"]`,
		`old_form    = "hello"`, // .features.message
		`pack_name   = "features"`,
		`version     = "1.2.3"`,
		`count_kind  = "int"`, // whole numbers reach templates as int, like nomad-pack
		`ratio       = "0.5"`,
		`enabled     = "false"`,
		`team        = "bench"`,
		`port        = "http:8080"`, // optional() default applied
		`var_count   = "9"`,
		`upper       = "HELLO"`,
		`count = 2`,
	)
	if strings.Contains(job, "file ") {
		t.Errorf("conditional block rendered although extra_file is empty:\n%s", job)
	}
	if got := r.Files["policy.hcl"]; !strings.Contains(got, `namespace "hello"`) {
		t.Errorf("auxiliary template policy.hcl.tpl not rendered: %q", got)
	}
	if _, ok := r.Files["_helpers"]; ok {
		t.Error("helpers must not be rendered as a file")
	}
	if _, ok := r.Files["broken_call.nomad"]; ok {
		t.Error("a template rendering only whitespace must be left out")
	}
	if got := strings.Join(r.JobFiles(), ","); got != "features.nomad,quiet.nomad" {
		t.Errorf("JobFiles = %s", got)
	}
	if strings.TrimSpace(r.Outputs) != "Deployed features with message hello." {
		t.Errorf("outputs.tpl rendered as %q", r.Outputs)
	}
}

func TestRenderOverridesConvertToDeclaredTypes(t *testing.T) {
	p := loadFixture(t, "features")
	extra := filepath.Join(t.TempDir(), "extra.txt")
	if err := os.WriteFile(extra, []byte("from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRender(t, p, map[string]string{
		"message":        "bye",
		"features.count": "5", // nomad-pack's packname.name form
		"ratio":          "1.25",
		"enabled":        "true",
		"datacenters":    `["dc1", "dc2"]`,
		"labels":         `{ team = "perf", tier = "gold" }`,
		"port":           `{ name = "grpc", to = 9090 }`,
		"extra_file":     extra,
		"mode":           "quiet",
	})
	wantContains(t, r.Files["features.nomad"],
		`job "features-bye" {`,
		`datacenters = ["dc1", "dc2"]`,
		`ratio       = "1.25"`,
		`enabled     = "true"`,
		`team        = "perf"`,
		`port        = "grpc:9090"`,
		`file        = "from a file"`,
		`count = 5`,
	)
	if _, ok := r.Files["quiet.nomad"]; ok {
		t.Error("quiet.nomad switched itself off with mode=quiet but was rendered")
	}
}

func TestVarFilesAcceptBothKeyFormsAndCLIWins(t *testing.T) {
	p := loadFixture(t, "features")
	file := filepath.Join(t.TempDir(), "vars.hcl")
	src := `# a comment line first
message = "from-file"
features.count = 7
datacenters = [
  "eu1",
]
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRender(t, p, map[string]string{"message": "from-cli"}, file)
	wantContains(t, r.Files["features.nomad"], `job "features-from-cli" {`, `count = 7`, `datacenters = ["eu1"]`)
	if r.Values["count"].AsBigFloat().String() != "7" {
		t.Errorf("Values[count] = %v", r.Values["count"])
	}
}

func TestVarFileErrorsNameFileAndLine(t *testing.T) {
	p := loadFixture(t, "features")
	dir := t.TempDir()
	cases := map[string]struct{ src, want string }{
		"unknown": {"message = \"x\"\nbogus = 1\n",
			`vars.hcl:2,1-6: no variable "bogus" is declared in testdata/features/variables.hcl (declared: count, datacenters, enabled, extra_file, labels, message, mode, port, ratio)`},
		"wrong type": {"\n\ncount = \"lots\"\n",
			`vars.hcl:3,9-15: count: a number is required (variable "count" has type number, declared at testdata/features/variables.hcl:7)`},
		"other pack": {"other.count = 1\n", `vars.hcl:1,1-6: other.count refers to pack "other"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, "vars.hcl")
			if err := os.WriteFile(file, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := p.Render(nil, []string{file})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

func TestCLIOverrideErrors(t *testing.T) {
	p := loadFixture(t, "features")
	cases := map[string]struct {
		overrides map[string]string
		want      string
	}{
		"unknown variable": {map[string]string{"bogus": "1"},
			`pack features: --var bogus=1: no variable "bogus" is declared in testdata/features/variables.hcl (declared: count, datacenters, enabled, extra_file, labels, message, mode, port, ratio)`},
		"number": {map[string]string{"count": "abc"},
			`--var count=abc: a number is required (variable "count" has type number, declared at testdata/features/variables.hcl:7)`},
		"bool":                  {map[string]string{"enabled": "yes"}, `--var enabled=yes: a bool is required`},
		"list syntax":           {map[string]string{"datacenters": `["dc1"`}, `is not a valid HCL expression for a list(string)`},
		"unquoted list element": {map[string]string{"datacenters": `[dc1]`}, `quote strings inside lists`},
		"object attribute":      {map[string]string{"port": `{ to = 1 }`}, `attribute "name" is required`},
		"other pack":            {map[string]string{"other.count": "1"}, `refers to pack "other", but this pack is "features"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := p.Render(c.overrides, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

func TestFailShowsMessageAndLocation(t *testing.T) {
	p := loadFixture(t, "features")
	_, err := p.Render(map[string]string{"mode": "explode"}, nil)
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("want a *TemplateError, got %T: %v", err, err)
	}
	if !te.Fail || te.File != "testdata/features/templates/_helpers.tpl" || te.Line != 3 || te.Template != "features.check" {
		t.Errorf("fail located as %+v", te)
	}
	want := `pack features: testdata/features/templates/_helpers.tpl:3:4: mode "explode" is not allowed; valid modes: ok, quiet (fail called in template "features.check")`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
}

func TestExecutionErrorNamesTemplateLine(t *testing.T) {
	p := loadFixture(t, "features")
	_, err := p.Render(map[string]string{"mode": "typo"}, nil)
	if err == nil {
		t.Fatal("var with an undeclared name must fail")
	}
	wantContains(t, err.Error(),
		"testdata/features/templates/broken_call.nomad.tpl:2:3:",
		`no variable "mesage" is declared in testdata/features/variables.hcl`)
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	cases := map[string][]string{
		"unclosed": {"pack unclosed: testdata/unclosed/templates/unclosed.nomad.tpl:8: unexpected EOF",
			"missing its [[ end ]]"},
		"undefined_func": {`pack undefined_func: testdata/undefined_func/templates/undefined_func.nomad.tpl:3: function "shout" not defined`},
		"bad_default":    {`pack bad_default: testdata/bad_default/variables.hcl:8,17-23: default of variable "count": a number is required (variable "count" has type number, declared at testdata/bad_default/variables.hcl:6)`},
	}
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", name))
			if err == nil {
				t.Fatal("Load succeeded on a broken pack")
			}
			wantContains(t, err.Error(), wants...)
		})
	}
}

func TestVarAndMetaNeedThePackContext(t *testing.T) {
	p := &Pack{Name: "x", Dir: "x", Metadata: map[string]map[string]string{"pack": {"name": "x"}},
		Variables: map[string]*Variable{}, Templates: map[string]string{"x.nomad.tpl": `[[ meta "pack.name" 42 ]]`}}
	_, err := p.Render(nil, nil)
	if err == nil || !strings.Contains(err.Error(), "meta needs the pack context") {
		t.Fatalf("error %v", err)
	}
}

func TestToStringList(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{[]any{"a", `b"c`, 3}, `["a", "b\"c", "3"]`},
		{[]string{"x"}, `["x"]`},
		{[]any{}, `[]`},
	} {
		got, err := toStringList(c.in)
		if err != nil || got != c.want {
			t.Errorf("toStringList(%v) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := toStringList("nope"); err == nil {
		t.Error("toStringList accepted a string")
	}
}

func TestFind(t *testing.T) {
	dir, err := Find("taewa")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != "taewa" || !isPackDir(dir) {
		t.Errorf("Find(taewa) = %s", dir)
	}
	if got, err := Find("testdata/features"); err != nil || got != "testdata/features" {
		t.Errorf("Find(path) = %s, %v", got, err)
	}
	_, err = Find("no_such_pack")
	if err == nil || !strings.Contains(err.Error(), `pack "no_such_pack" not found`) || !strings.Contains(err.Error(), "taewa") {
		t.Errorf("Find(no_such_pack) error %v should list the available packs", err)
	}
}
