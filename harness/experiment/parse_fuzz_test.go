package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
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
	// the phases block, until a spec under experiments/ has one
	f.Add([]byte(appSpec("    runner = \"artillery\"\n    rates = [10, 50]\n" + study003Phases)))
	opts := Options{Orchestrators: knownOrchestrators, BaseDir: root, ListVariants: cachedVariants(PackVariants(filepath.Join(root, "packs"))),
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
	f.Fuzz(func(t *testing.T, src []byte) {
		const filename = "fuzz.hcl"
		// a spec that stalls the parser is a finding too; panicking from the
		// timer ends the worker, which makes the fuzzer keep the input
		stalled := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("Parse ran over 5 s on %q", src)) })
		defer stalled.Stop()
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

// Specs Parse once accepted that could not be planned or archived (seen in
// review, now held by FuzzParse's promises); each is now refused with a
// diagnostic on the line at fault.
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
		_, err := Parse([]byte(c.src), "fuzz.hcl", Options{Orchestrators: knownOrchestrators, BaseDir: base})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q in the error", name, err, c.want)
		}
	}
}

// cachedVariants keeps the fuzzer from rereading the packs on every input.
func cachedVariants(list VariantLister) VariantLister {
	var mu sync.Mutex
	type answer struct {
		variants []string
		err      error
	}
	seen := map[string]answer{}
	return func(pack string) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		a, ok := seen[pack]
		if !ok {
			a.variants, a.err = list(pack)
			seen[pack] = a
		}
		return a.variants, a.err
	}
}

func requireDiagnosticsInFile(t *testing.T, err error, filename string, size int) {
	t.Helper()
	var se *SpecError
	if !errors.As(err, &se) || len(se.Diags) == 0 {
		t.Fatalf("error without diagnostics: %v", err)
	}
	for _, d := range se.Diags {
		r := d.Subject
		if r == nil {
			t.Fatalf("diagnostic without a source range: %s; %s", d.Summary, d.Detail)
		}
		if r.Filename != filename || r.Start.Byte < 0 || r.Start.Byte > r.End.Byte || r.End.Byte > size || r.Start.Line < 1 || r.Start.Column < 1 {
			t.Fatalf("diagnostic %q points outside the %d-byte file: %s (bytes %d-%d)", d.Summary, size, r, r.Start.Byte, r.End.Byte)
		}
	}
}

func requireValidSweep(t *testing.T, s *Sweep) {
	t.Helper()
	if s.Duration <= 0 || s.Warmup < 0 || s.Cooldown < 0 || s.Repetitions < 1 || len(s.Apps) == 0 || len(s.Orchestrators) == 0 {
		t.Fatalf("accepted sweep breaks its own rules: %+v", s)
	}
	levels := 0
	for _, app := range s.Apps {
		l := app.Load
		if len(app.Variants) == 0 || l.Threads < 1 || l.Connections < l.Threads {
			t.Fatalf("app %s: variants %v, threads %d, connections %d", app.Name, app.Variants, l.Threads, l.Connections)
		}
		if (len(app.Rates) == 0) == (len(app.Users) == 0) {
			t.Fatalf("app %s: rates %v and users %v, want exactly one", app.Name, app.Rates, app.Users)
		}
		if !slices.IsSorted(app.Rates) || !slices.IsSorted(app.Users) || len(slices.Compact(slices.Clone(app.Rates))) != len(app.Rates) {
			t.Fatalf("app %s: levels not ascending and distinct: %v %v", app.Name, app.Rates, app.Users)
		}
		for _, r := range app.Rates {
			if !(r > 0) || math.IsInf(r, 0) {
				t.Fatalf("app %s: rate %v", app.Name, r)
			}
		}
		if l.Iterations != nil && l.Iterations.PerUser() < 1 {
			t.Fatalf("app %s: %d requests per user", app.Name, l.Iterations.PerUser())
		}
		levels += len(s.Orchestrators) * len(app.Variants) * (len(app.Rates) + len(app.Users))
	}
	steps := Plan(s)
	if len(steps) != levels*s.Repetitions {
		t.Fatalf("planned %d steps, want %d", len(steps), levels*s.Repetitions)
	}
	ids := map[string]bool{}
	for i, st := range steps {
		if st.Index != i || ids[st.ID] {
			t.Fatalf("step %d is %+v (a repeated ID or index)", i, st)
		}
		ids[st.ID] = true
		if _, err := json.Marshal(st); err != nil {
			t.Fatalf("step %s does not fit the JSON archive: %v", st.ID, err)
		}
	}
	again := Plan(s)
	for i := range steps {
		if again[i].ID != steps[i].ID {
			t.Fatalf("the same seed planned %s then %s at %d", steps[i].ID, again[i].ID, i)
		}
	}
}
