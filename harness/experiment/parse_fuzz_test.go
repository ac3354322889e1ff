package experiment

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// FuzzParse requires Parse to answer any source with exactly one of a
// spec or diagnostics, every diagnostic pointing into the file, and every
// spec it accepts to hold what the parser promises and plan cleanly.
func FuzzParse(f *testing.F) {
	root := filepath.Join("..", "..")
	specs, err := filepath.Glob(filepath.Join(root, "experiments", "*.hcl"))
	if err != nil || len(specs) == 0 {
		f.Fatalf("no specs to seed from: %v", err)
	}
	for _, path := range specs {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	opts := Options{BaseDir: root, ListVariants: cachedVariants(PackVariants(filepath.Join(root, "packs"))),
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
	f.Fuzz(func(t *testing.T, src []byte) {
		const filename = "fuzz.hcl"
		s, err := Parse(src, filename, opts)
		if err != nil {
			if s != nil {
				t.Fatalf("both a spec and an error: %v", err)
			}
			requireDiagnosticsInFile(t, err, filename, len(src))
			return
		}
		if s == nil {
			t.Fatal("neither a spec nor an error")
		}
		requireValidSweep(t, s)
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("sweep does not fit the JSON archive: %v", err)
		}
	})
}

// Specs Parse once accepted that could not be planned or archived; each is
// now refused with a diagnostic on the line at fault.
func TestParseRefusesWhatFuzzingFound(t *testing.T) {
	base := testBase(t)
	spec := func(sweepAttrs, appBody string) string {
		return "sweep \"s\" {\n  duration = \"1s\"\n" + sweepAttrs + "  app \"taewa\" {\n    variants = [\"baseline\"]\n" + appBody + "  }\n}\n"
	}
	for name, c := range map[string]struct{ src, want string }{
		"a million repetitions": {spec("  repetitions = 1000000\n", "    rates = [1, 2]\n"),
			"fuzz.hcl:1,1-10: Too many steps; the sweep plans 2000000 steps, more than 10000"},
		"an infinite var": {spec("", "    rates = [1]\n    vars  = { x = [1e400] }\n"),
			"fuzz.hcl:6,13-28: Invalid vars; vars holds a number beyond float64's range"},
		"an infinite variant var": {spec("", "    rates = [1]\n    variant_vars = { baseline = { x = 1e400 } }\n"),
			"fuzz.hcl:6,20-48: Invalid variant_vars; variant_vars.baseline holds a number beyond float64's range"},
		"loops past int": {spec("", "    iterations {\n      threads = 1\n      loops   = 2000000000\n      request { path = \"/\" }\n      request { path = \"/b\" }\n    }\n"),
			"fuzz.hcl:7,17-27: Invalid loops; loops × requests must stay below 2147483647, got 2000000000 × 2"},
	} {
		_, err := Parse([]byte(c.src), "fuzz.hcl", Options{BaseDir: base})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q in the error", name, err, c.want)
		}
	}
}
