package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// VariantLister returns the variants a pack supports, or an error naming the
// valid packs when it does not exist.
type VariantLister func(pack string) ([]string, error)

// variantListRE finds the convention every pack follows: the description of
// its "variant" variable ends with "One of: baseline, vertical, horizontal."
var variantListRE = regexp.MustCompile(`One of:\s*([^.]+?)\.?\s*$`)

// helperVariantsRE finds the other convention: the pack's validate helper
// declares its choices as [[- $variants := list "a" "b" -]] in a template.
var helperVariantsRE = regexp.MustCompile(`\$variants\s*:=\s*list((?:\s+"[^"]*")+)`)

var quotedRE = regexp.MustCompile(`"([^"]*)"`)

// PackVariants lists a pack's variants from packsDir/<pack>. It reads, in
// order: the "variant" variable's description in variables.hcl ending with
// "One of: a, b, c.", then a `$variants := list "a" "b"` line in one of the
// pack's templates (the validate helper every orchbench pack has).
func PackVariants(packsDir string) VariantLister {
	return func(pack string) ([]string, error) {
		dir := filepath.Join(packsDir, pack)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("pack %q not found in %s; available: %s", pack, packsDir, strings.Join(listPacks(packsDir), ", "))
		}
		path := filepath.Join(dir, "variables.hcl")
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("pack %q: %w", pack, err)
		}
		variants, descErr := variantsFromVariables(src, path)
		if descErr == nil {
			return variants, nil
		}
		if variants := variantsFromTemplates(filepath.Join(dir, "templates")); len(variants) > 0 {
			return variants, nil
		}
		return nil, fmt.Errorf("%w; nor does any template declare $variants := list \"a\" \"b\"", descErr)
	}
}

func variantsFromTemplates(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.tpl"))
	sort.Strings(files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		m := helperVariantsRE.FindSubmatch(src)
		if m == nil {
			continue
		}
		var out []string
		for _, q := range quotedRE.FindAllSubmatch(m[1], -1) {
			out = append(out, string(q[1]))
		}
		return out
	}
	return nil
}

func listPacks(packsDir string) []string {
	entries, _ := os.ReadDir(packsDir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"(none)"}
	}
	return out
}

func variantsFromVariables(src []byte, path string) ([]string, error) {
	file, diags := hclsyntax.ParseConfig(src, path, hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		return nil, diags
	}
	// Partial content: a pack's variables file holds things we do not care about.
	content, _, diags := file.Body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}},
	})
	if diags.HasErrors() {
		return nil, diags
	}
	for _, b := range content.Blocks {
		if b.Labels[0] != "variant" {
			continue
		}
		vc, _, diags := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "description"}}})
		if diags.HasErrors() {
			return nil, diags
		}
		attr, ok := vc.Attributes["description"]
		if !ok {
			return nil, fmt.Errorf("%s: variable \"variant\" has no description listing its variants (\"One of: a, b.\")", b.DefRange)
		}
		val, diags := attr.Expr.Value(nil)
		if diags.HasErrors() || val.Type() != cty.String || val.IsNull() {
			return nil, fmt.Errorf("%s: variant description must be a literal string", attr.Range)
		}
		m := variantListRE.FindStringSubmatch(val.AsString())
		if m == nil {
			return nil, fmt.Errorf("%s: variant description must end with \"One of: a, b, c.\"", attr.Range)
		}
		var out []string
		for _, v := range strings.Split(m[1], ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: no variable \"variant\" declared", path)
}
