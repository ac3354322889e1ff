package pack

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty/convert"
)

// FuzzPackVariables runs the pack variable parser end to end on fuzzed
// text: a variables.hcl, a variable file applied over its defaults, and
// one --var key=raw. Every error must point into the text it is about;
// every value accepted must already have its declared type and reach the
// templates; and an override applied twice must change nothing the second
// time.
func FuzzPackVariables(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "..", "packs", "*", variablesFile))
	if err != nil || len(files) == 0 {
		f.Fatalf("no packs to seed from: %v", err)
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src), "", "variant", "vertical")
	}
	paths, err := os.ReadFile(filepath.Join("testdata", "paths", variablesFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(paths), "fuzz.where = \"network.mode\"\n", "network.mode", "host")
	f.Fuzz(func(t *testing.T, declarations, varFile, key, raw string) {
		const declFile, valueFile = "variables.hcl", "values.hcl"
		vars, err := parseVariables([]byte(declarations), declFile)
		if err != nil {
			requireNamesFile(t, err, declFile)
			return
		}
		p := &Pack{Name: "fuzz", Dir: ".", Variables: vars}
		vals := Values{}
		for name, v := range vars {
			if !hclsyntax.ValidIdentifier(name) || name != v.Name {
				t.Fatalf("variable %q declared as %q", name, v.Name)
			}
			vals[name] = v.Default
		}
		requireTyped(t, p, vals, "defaults")
		if err := p.applyVarSource(vals, []byte(varFile), valueFile); err != nil {
			requireNamesFile(t, err, valueFile)
			return
		}
		requireTyped(t, p, vals, "the variable file")
		if err := p.applyOverride(vals, key, raw); err != nil {
			if !strings.HasPrefix(err.Error(), "--var "+key+"="+raw+": ") {
				t.Fatalf("error does not name the --var: %v", err)
			}
			return
		}
		requireTyped(t, p, vals, "--var "+key)
		v, _, _ := p.resolvePath(key)
		once := vals[v.Name]
		if err := p.applyOverride(vals, key, raw); err != nil {
			t.Fatalf("the same --var failed the second time: %v", err)
		}
		if !vals[v.Name].RawEquals(once) {
			t.Fatalf("--var %s=%s twice: %#v, then %#v", key, raw, once, vals[v.Name])
		}
	})
}

// requireNamesFile requires an error to point into the file it is about, as
// compiler output does.
func requireNamesFile(t *testing.T, err error, file string) {
	t.Helper()
	if !strings.Contains(err.Error(), file+":") {
		t.Fatalf("error does not say where in %s: %v", file, err)
	}
}

// requireTyped checks that every value has its declared type already (a
// second conversion changes nothing) and converts for the templates.
func requireTyped(t *testing.T, p *Pack, vals Values, after string) {
	t.Helper()
	for name, val := range vals {
		v := p.Variables[name]
		if val.IsNull() {
			continue // no default: nothing typed yet
		}
		again, err := convert.Convert(val, v.Type)
		if err != nil || !again.RawEquals(val) {
			t.Fatalf("after %s, %s = %#v is not a %#v: %v", after, name, val, v.Type, err)
		}
		if _, err := goValue(val); err != nil {
			t.Fatalf("after %s, %s = %#v cannot reach a template: %v", after, name, val, err)
		}
	}
}

// A --var path adding a key to a map of objects once built a map whose new
// element lacked its siblings' attributes, and cty panicked (seen in
// review, the kind of input FuzzPackVariables explores).
func TestOverridePathAddsAMapElement(t *testing.T) {
	vars, err := parseVariables([]byte(`variable "strict" {
  type    = map(object({ a = number, b = string }))
  default = { x = { a = 1, b = "s" } }
}
variable "loose" {
  type    = map(object({ a = number, b = optional(string, "z") }))
  default = { x = { a = 1, b = "s" } }
}
`), "variables.hcl")
	if err != nil {
		t.Fatal(err)
	}
	p := &Pack{Name: "fuzz", Dir: ".", Variables: vars}
	vals := Values{"strict": vars["strict"].Default, "loose": vars["loose"].Default}
	if err := p.applyOverride(vals, "strict.y.a", "2"); err == nil || !strings.Contains(err.Error(), `attribute "b" is required`) {
		t.Errorf("a new element without its required attribute: %v", err)
	}
	if err := p.applyOverride(vals, "loose.y.a", "2"); err != nil {
		t.Fatal(err)
	}
	got, err := goValue(vals["loose"])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x": map[string]any{"a": 1, "b": "s"}, "y": map[string]any{"a": 2, "b": "z"}}
	if !reflect.DeepEqual(got, want) || !vals["loose"].Type().IsMapType() {
		t.Errorf("loose = %#v (%s), want the map %v", got, vals["loose"].Type().FriendlyName(), want)
	}
}
