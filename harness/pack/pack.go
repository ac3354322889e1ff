// Package pack reads and renders packs written in nomad-pack's format
// (metadata.hcl, variables.hcl, templates/*.tpl with [[ ]] delimiters), so
// the same pack directory works with both `nomad-pack run` and `orchbench pack`.
//
// The real nomad-pack binary is not available on the benchmark machines; this
// package reimplements the subset of its behaviour that packs in this
// repository rely on: typed HCL2 variables with overrides, the `var`, `vars`
// and `meta` template functions, the older `.my.x` / `.<pack>.x` data forms,
// `fileContents`, `toStringList` and every sprig function.
package pack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// File names nomad-pack expects inside a pack directory.
const (
	metadataFile  = "metadata.hcl"
	variablesFile = "variables.hcl"
	templatesDir  = "templates"
	outputsFile   = "outputs.tpl"
	jobSuffix     = ".nomad.tpl"
	tplSuffix     = ".tpl"
)

// RegistryDir is the directory, relative to the repository root, holding the
// packs that `orchbench pack <name>` finds by name.
const RegistryDir = "packs"

// Pack is a loaded pack directory: its metadata, declared variables and raw
// template sources. Loading never renders, so one Pack can be rendered many
// times with different overrides.
type Pack struct {
	// Name is the pack's directory name, which nomad-pack also uses as the
	// pack name for `--var name.x=...` and the `.name.x` data form.
	Name string
	// Dir is the pack directory as given (absolute or relative to the
	// working directory).
	Dir string
	// Metadata holds metadata.hcl attributes keyed by block then attribute,
	// e.g. Metadata["pack"]["version"].
	Metadata map[string]map[string]string
	// Variables are the declarations from variables.hcl by name.
	Variables map[string]*Variable
	// Templates are the template sources under templates/ keyed by file name.
	Templates map[string]string
	// Outputs is outputs.tpl's source, empty when the pack has none.
	Outputs string
}

// Find resolves a pack argument to a directory. An argument naming an
// existing pack directory (one containing metadata.hcl) is used as is;
// otherwise it is looked up as packs/<name> in the working directory and then
// in each parent, so commands work from anywhere inside the repository.
func Find(name string) (string, error) {
	if name == "" {
		return "", errors.New("pack name is empty")
	}
	if isPackDir(name) {
		return name, nil
	}
	if strings.ContainsRune(name, filepath.Separator) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("%s is not a pack directory (no %s)", name, metadataFile)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	var searched []string
	for dir := wd; ; dir = filepath.Dir(dir) {
		candidate := filepath.Join(dir, RegistryDir, name)
		if isPackDir(candidate) {
			return relativeToWorkdir(candidate), nil
		}
		if registry := filepath.Join(dir, RegistryDir); isDir(registry) {
			searched = append(searched, registry)
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if len(searched) == 0 {
		return "", fmt.Errorf("pack %q not found: no %s/ directory in %s or its parents", name, RegistryDir, wd)
	}
	return "", fmt.Errorf("pack %q not found in %s (available: %s)", name,
		strings.Join(searched, ", "), strings.Join(listPacks(searched), ", "))
}

func listPacks(registries []string) []string {
	var names []string
	for _, reg := range registries {
		entries, _ := os.ReadDir(reg)
		for _, e := range entries {
			if e.IsDir() && isPackDir(filepath.Join(reg, e.Name())) {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	return names
}

func isPackDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, metadataFile))
	return err == nil && !st.IsDir()
}

func isDir(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

// relativeToWorkdir shortens a path for error messages; people read
// "packs/taewa/variables.hcl:12" more easily than a long absolute path.
func relativeToWorkdir(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return abs
	}
	return rel
}

// Load reads a pack directory. It checks everything that can be checked
// without variable values: metadata and variables syntax, declared types and
// defaults, and template syntax (so a missing [[ end ]] is reported here).
func Load(dir string) (*Pack, error) {
	dir = relativeToWorkdir(dir)
	if !isPackDir(dir) {
		return nil, fmt.Errorf("%s is not a pack directory (no %s)", dir, metadataFile)
	}
	p := &Pack{
		Name:      filepath.Base(filepath.Clean(dir)),
		Dir:       dir,
		Templates: map[string]string{},
	}
	if abs, err := filepath.Abs(dir); err == nil {
		p.Name = filepath.Base(abs)
	}
	var err error
	if p.Metadata, err = loadMetadata(filepath.Join(dir, metadataFile)); err != nil {
		return nil, fmt.Errorf("pack %s: %w", p.Name, err)
	}
	if p.Variables, err = loadVariables(filepath.Join(dir, variablesFile)); err != nil {
		return nil, fmt.Errorf("pack %s: %w", p.Name, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, templatesDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("pack %s: %w", p.Name, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), tplSuffix) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, templatesDir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", p.Name, err)
		}
		p.Templates[e.Name()] = string(src)
	}
	if src, err := os.ReadFile(filepath.Join(dir, outputsFile)); err == nil {
		p.Outputs = string(src)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("pack %s: %w", p.Name, err)
	}
	if _, err := p.parseTemplates(nil); err != nil {
		return nil, fmt.Errorf("pack %s: %w", p.Name, err)
	}
	return p, nil
}

// loadMetadata reads metadata.hcl's app/pack/integration blocks into strings.
// Dependencies are refused loudly: silently rendering a pack without the
// packs it depends on would deploy something different from nomad-pack.
func loadMetadata(path string) (map[string]map[string]string, error) {
	body, err := parseHCLFile(path)
	if err != nil {
		return nil, err
	}
	for name, attr := range body.Attributes {
		return nil, fmt.Errorf("%s: unexpected attribute %q at top level; metadata lives in app {} and pack {} blocks", attr.SrcRange, name)
	}
	meta := map[string]map[string]string{}
	for _, block := range body.Blocks {
		if block.Type == "dependency" {
			return nil, fmt.Errorf("%s: pack dependencies are not supported by orchbench's renderer; inline the dependency's templates", block.TypeRange)
		}
		if len(block.Labels) > 0 {
			return nil, fmt.Errorf("%s: block %q takes no labels", block.TypeRange, block.Type)
		}
		values := meta[block.Type]
		if values == nil {
			values = map[string]string{}
			meta[block.Type] = values
		}
		for name, attr := range block.Body.Attributes {
			v, diags := attr.Expr.Value(nil)
			if diags.HasErrors() {
				return nil, diagError(diags)
			}
			s, err := convert.Convert(v, cty.String)
			if err != nil || s.IsNull() {
				return nil, fmt.Errorf("%s: %s.%s must be a string", attr.SrcRange, block.Type, name)
			}
			values[name] = s.AsString()
		}
	}
	if meta["pack"]["name"] == "" {
		return nil, fmt.Errorf("%s: pack { name = ... } is required", path)
	}
	return meta, nil
}

// parseHCLFile parses a native-syntax HCL file and returns its body.
func parseHCLFile(path string) (*hclsyntax.Body, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseHCLSource(src, path)
}

func parseHCLSource(src []byte, path string) (*hclsyntax.Body, error) {
	file, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diagError(diags)
	}
	return file.Body.(*hclsyntax.Body), nil
}

// diagError flattens HCL diagnostics into one error whose text starts with
// file:line,col like compiler output.
func diagError(diags hcl.Diagnostics) error {
	var lines []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		if d.Subject != nil {
			msg = d.Subject.String() + ": " + msg
		}
		lines = append(lines, msg)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// Meta returns a metadata value by dotted key such as "pack.name" or
// "app.url", with nomad-pack's optional "nomad_pack." prefix.
func (p *Pack) Meta(key string) (string, bool) {
	key = strings.TrimPrefix(key, "nomad_pack.")
	block, attr, ok := strings.Cut(key, ".")
	if !ok {
		return "", false
	}
	v, ok := p.Metadata[block][attr]
	return v, ok
}

// VariableNames lists the declared variables alphabetically.
func (p *Pack) VariableNames() []string {
	names := make([]string, 0, len(p.Variables))
	for n := range p.Variables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
