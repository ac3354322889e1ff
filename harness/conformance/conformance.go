// Package conformance checks that a pack keeps the conventions the harness
// relies on, so adding an app is writing a pack, not Go: every variant and
// driver renders into a job Nomad parses, the orchbench_* meta contract is
// complete, the variants keep their proportions (vertical is twice
// baseline, horizontal is baseline times scale), resource_scale shrinks
// CPU proportionally, bad values fail with the valid choices, and every
// placement (harness/placement) applies to the rendered jobs.
package conformance

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchbench/orchbench/harness/pack"
)

// Finding is one broken convention.
type Finding struct {
	Pack string
	// Where narrows it down: a file, or the variant and driver rendered.
	Where   string
	Problem string
}

func (f Finding) String() string {
	if f.Where == "" {
		return f.Pack + ": " + f.Problem
	}
	return f.Pack + " (" + f.Where + "): " + f.Problem
}

// Checker checks packs. Nomad is the nomad binary, which parses a rendered
// job offline (`nomad job run -output`) exactly as it would be submitted.
type Checker struct {
	Nomad string
}

// Report is what Check found and how much it looked at.
type Report struct {
	Pack     string
	Variants []string
	Drivers  []string
	// Renders counts the combinations rendered and parsed.
	Renders  int
	Findings []Finding
}

// the variables every orchbench pack declares
var requiredVariables = []string{"job_name", "datacenters", "region", "variant", "scale", "resource_scale"}

// Check checks one pack directory. An error means the check itself could
// not run (no nomad binary); broken conventions are Findings.
func (c Checker) Check(dir string) (Report, error) {
	r := Report{Pack: filepath.Base(filepath.Clean(dir))}
	if _, err := os.Stat(c.Nomad); err != nil {
		return r, fmt.Errorf("conformance: the nomad binary %q is needed to parse rendered jobs: %w (./justw tools installs it)", c.Nomad, err)
	}
	add := func(where, format string, args ...any) {
		r.Findings = append(r.Findings, Finding{Pack: r.Pack, Where: where, Problem: fmt.Sprintf(format, args...)})
	}
	p, err := pack.Load(dir)
	if err != nil {
		add("", "does not load: %v", err)
		return r, nil
	}
	checkLayout(p, add)
	for _, name := range requiredVariables {
		if _, ok := p.Variables[name]; !ok {
			add(filepath.Join(dir, "variables.hcl"), "declares no variable %q, which every orchbench pack has", name)
		}
	}
	checkPlacementVariable(p, filepath.Join(dir, "variables.hcl"), add)
	if len(r.Findings) > 0 {
		return r, nil
	}
	r.Variants = choices(p, "variant", add)
	r.Drivers = []string{""}
	if _, ok := p.Variables["driver"]; ok {
		r.Drivers = choices(p, "driver", add)
	}
	checkBadValues(p, add)
	if len(r.Variants) == 0 || len(r.Drivers) == 0 {
		return r, nil
	}
	for _, driver := range r.Drivers {
		shapes := map[string]shape{}
		for _, variant := range r.Variants {
			s, ok := c.render(p, map[string]string{"variant": variant, "driver": driver}, add)
			r.Renders++
			if !ok {
				continue
			}
			checkShape(s, variant, add)
			checkPlacement(s, add)
			shapes[variant] = s
		}
		checkProportions(c, p, driver, shapes, add)
	}
	checkAutoscale(c, p, add)
	return r, nil
}

// checkLayout is nomad-pack's layout and the documentation a user reads.
func checkLayout(p *pack.Pack, add func(string, string, ...any)) {
	meta := filepath.Join(p.Dir, "metadata.hcl")
	if name := p.Metadata["pack"]["name"]; name != p.Name {
		add(meta, "pack.name is %q; nomad-pack and orchbench find the pack by its directory name %q", name, p.Name)
	}
	if p.Metadata["pack"]["description"] == "" {
		add(meta, "pack.description is empty")
	}
	readme, err := os.ReadFile(filepath.Join(p.Dir, "README.md"))
	if err != nil {
		add("README.md", "missing: a pack's README shows how to run it")
	} else if !strings.Contains(string(readme), "run "+p.Name) {
		add("README.md", "has no example running the pack (`nomad-pack run %s` or `orchbench pack run %s`)", p.Name, p.Name)
	}
	for _, name := range p.VariableNames() {
		v := p.Variables[name]
		if strings.TrimSpace(v.Description) == "" {
			add(fmt.Sprintf("%s:%d", v.DeclRange.Filename, v.DeclRange.Start.Line), "variable %q has no description", name)
		}
		if v.Type.Equals(anyType) {
			add(fmt.Sprintf("%s:%d", v.DeclRange.Filename, v.DeclRange.Start.Line), "variable %q has no type", name)
		}
	}
}

// choices renders with a value no pack accepts and reads the valid ones
// from the error, which must list them: "valid <name>s are: a, b, c".
func choices(p *pack.Pack, variable string, add func(string, string, ...any)) []string {
	_, err := p.Render(map[string]string{variable: "no-such-" + variable}, nil)
	if err == nil {
		add("--var "+variable+"=no-such-"+variable, "renders; an unknown %s must fail", variable)
		return nil
	}
	marker := "valid " + variable + "s are: "
	_, list, ok := strings.Cut(err.Error(), marker)
	if !ok {
		add("--var "+variable+"=no-such-"+variable, "fails without listing the valid choices (want %q in the message): %v", marker+"...", err)
		return nil
	}
	if i := strings.Index(list, " (fail called"); i >= 0 {
		list = list[:i]
	}
	var out []string
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c), ".")); c != "" {
			out = append(out, c)
		}
	}
	if variable == "variant" && !slices.Contains(out, "baseline") {
		add("variable variant", "the valid variants %v have no baseline", out)
	}
	return out
}

// checkBadValues: a count or a scale that cannot be must fail, not render.
func checkBadValues(p *pack.Pack, add func(string, string, ...any)) {
	for _, bad := range []map[string]string{{"scale": "-1"}, {"scale": "1.5"}, {"resource_scale": "0"}, {"resource_scale": "-0.5"}} {
		if _, err := p.Render(bad, nil); err == nil {
			add(describe(bad), "renders; it must fail with a message")
		}
	}
}

func describe(overrides map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if overrides[k] != "" {
			parts = append(parts, "--var "+k+"="+overrides[k])
		}
	}
	return strings.Join(parts, " ")
}
