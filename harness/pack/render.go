package pack

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// TemplateContext is what every template receives as ".". It is a map so the
// older nomad-pack data forms keep working: `.my.x`, `.<packname>.x` and
// `.nomad_pack.pack.name`. Newer packs pass it to `var "x" .` and
// `meta "pack.name" .`, which insist on receiving this type exactly like
// nomad-pack's functions insist on receiving its context.
type TemplateContext map[string]any

// Rendered is the result of rendering a pack with one set of values.
type Rendered struct {
	Pack   *Pack
	Values Values
	// Files maps each rendered template's output name (the template file
	// name without ".tpl", e.g. "taewa.nomad") to its text. Helpers
	// (files starting with "_") and templates that render to whitespace only
	// are left out, as nomad-pack does, so a template can switch itself off.
	Files map[string]string
	// Outputs is the rendered outputs.tpl, empty when the pack has none.
	Outputs string
}

// JobFiles lists the rendered Nomad job specifications (from *.nomad.tpl).
func (r *Rendered) JobFiles() []string {
	var names []string
	for name := range r.Files {
		if strings.HasSuffix(name, strings.TrimSuffix(jobSuffix, tplSuffix)) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// TemplatePath is the path of the template file an output came from, for
// messages that point people at the file to edit.
func (r *Rendered) TemplatePath(output string) string {
	return filepath.Join(r.Pack.Dir, templatesDir, output+tplSuffix)
}

// Render resolves variable values (defaults, then varFiles in order, then
// overrides keyed "name" or "packname.name") and executes every template.
func (p *Pack) Render(overrides map[string]string, varFiles []string) (*Rendered, error) {
	vals, err := p.resolveValues(overrides, varFiles)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", p.Name, err)
	}
	goVals := map[string]any{}
	for name, v := range vals {
		gv, err := goValue(v)
		if err != nil {
			return nil, fmt.Errorf("pack %s: variable %q: %w", p.Name, name, err)
		}
		goVals[name] = gv
	}
	metaMap := map[string]any{}
	for block, attrs := range p.Metadata {
		m := map[string]any{}
		for k, v := range attrs {
			m[k] = v
		}
		metaMap[block] = m
	}
	ctx := TemplateContext{"my": goVals, p.Name: goVals, "nomad_pack": metaMap}

	root, err := p.parseTemplates(ctx)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", p.Name, err)
	}
	out := &Rendered{Pack: p, Values: vals, Files: map[string]string{}}
	for _, file := range slices.Sorted(maps.Keys(p.Templates)) {
		if strings.HasPrefix(file, "_") {
			continue
		}
		text, err := execute(root, p.templateName(file), ctx)
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", p.Name, err)
		}
		if strings.TrimSpace(text) != "" {
			out.Files[strings.TrimSuffix(file, tplSuffix)] = text
		}
	}
	if p.Outputs != "" {
		if out.Outputs, err = execute(root, filepath.Join(p.Dir, outputsFile), ctx); err != nil {
			return nil, fmt.Errorf("pack %s: %w", p.Name, err)
		}
	}
	return out, nil
}

func execute(root *template.Template, name string, ctx TemplateContext) (string, error) {
	var buf bytes.Buffer
	if err := root.ExecuteTemplate(&buf, name, ctx); err != nil {
		return "", templateError(err)
	}
	return buf.String(), nil
}

// templateName names each template by its path so that text/template's own
// error messages already say which file and line went wrong.
func (p *Pack) templateName(file string) string {
	return filepath.Join(p.Dir, templatesDir, file)
}

// parseTemplates parses all templates into one set, so `template "x" .`
// reaches definitions in any file (helpers live in _helpers.tpl). ctx is nil
// when only checking syntax at load time.
func (p *Pack) parseTemplates(ctx TemplateContext) (*template.Template, error) {
	root := template.New(p.Name).Delims("[[", "]]").Funcs(p.funcMap(ctx))
	for _, file := range slices.Sorted(maps.Keys(p.Templates)) {
		if _, err := root.New(p.templateName(file)).Parse(p.Templates[file]); err != nil {
			return nil, templateError(err)
		}
	}
	if p.Outputs != "" {
		if _, err := root.New(filepath.Join(p.Dir, outputsFile)).Parse(p.Outputs); err != nil {
			return nil, templateError(err)
		}
	}
	return root, nil
}

// funcMap is sprig plus nomad-pack's own functions.
func (p *Pack) funcMap(ctx TemplateContext) template.FuncMap {
	funcs := sprig.TxtFuncMap()
	values := func(fn string, arg any) (map[string]any, error) {
		if _, ok := arg.(TemplateContext); !ok || ctx == nil {
			return nil, fmt.Errorf("%s needs the pack context as its last argument (usually \".\" or \"$\"), got %T", fn, arg)
		}
		return ctx["my"].(map[string]any), nil
	}
	funcs["var"] = func(name string, arg any) (any, error) {
		vals, err := values("var", arg)
		if err != nil {
			return nil, err
		}
		if v, ok := vals[name]; ok {
			return v, nil
		}
		v, path, err := p.resolvePath(name)
		if err != nil {
			return nil, err
		}
		return lookupPath(v.Name, vals[v.Name], path)
	}
	funcs["vars"] = func(arg any) (map[string]any, error) {
		return values("vars", arg)
	}
	funcs["meta"] = func(key string, arg any) (string, error) {
		if _, err := values("meta", arg); err != nil {
			return "", err
		}
		v, ok := p.Meta(key)
		if !ok {
			return "", fmt.Errorf("no metadata %q in %s (use keys like \"pack.name\" or \"app.url\")",
				key, filepath.Join(p.Dir, metadataFile))
		}
		return v, nil
	}
	// Like nomad-pack, relative paths are relative to the working directory;
	// failing that, to the registry's parent (the repository root for
	// packs/<name>), so the harness renders the same from any directory.
	funcs["fileContents"] = func(path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil && !filepath.IsAbs(path) {
			var err2 error
			if b, err2 = os.ReadFile(filepath.Join(p.Dir, "..", "..", path)); err2 == nil {
				err = nil
			}
		}
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	funcs["toStringList"] = toStringList
	return funcs
}

// toStringList renders a list as an HCL list of quoted strings, the form
// job specifications need for datacenters, args and similar.
func toStringList(list any) (string, error) {
	var items []string
	switch l := list.(type) {
	case []any:
		for _, v := range l {
			items = append(items, strconv.Quote(fmt.Sprint(v)))
		}
	case []string:
		for _, v := range l {
			items = append(items, strconv.Quote(v))
		}
	case nil:
	default:
		return "", fmt.Errorf("toStringList needs a list, got %T", list)
	}
	return "[" + strings.Join(items, ", ") + "]", nil
}

// TemplateError is a template parse or execution failure located in a file.
type TemplateError struct {
	File   string
	Line   int
	Column int // 0 when text/template reports only a line
	// Template is the defined template that was executing, if known.
	Template string
	Msg      string
	// Fail is true when the template called sprig's fail, i.e. the pack
	// rejected the values on purpose and Msg is the pack author's message.
	Fail bool
	Err  error
}

func (e *TemplateError) Error() string {
	loc := e.File + ":" + strconv.Itoa(e.Line)
	if e.Column > 0 {
		loc += ":" + strconv.Itoa(e.Column)
	}
	if e.Fail {
		return fmt.Sprintf("%s: %s (fail called in template %q)", loc, e.Msg, e.Template)
	}
	if e.Template != "" && e.Template != e.File {
		return fmt.Sprintf("%s: in template %q: %s", loc, e.Template, e.Msg)
	}
	return loc + ": " + e.Msg
}

func (e *TemplateError) Unwrap() error { return e.Err }

var (
	templateErrorRE = regexp.MustCompile(`(?s)^template: (.+?):(\d+)(?::(\d+))?: (.*)$`)
	executingRE     = regexp.MustCompile(`(?s)^executing "([^"]*)" at <(.*?)>: (.*)$`)
)

// templateError turns text/template's "template: name:line:col: executing
// ... at <...>: error calling fail: msg" into a TemplateError that leads
// with the location and the pack author's message.
func templateError(err error) error {
	m := templateErrorRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	te := &TemplateError{File: m[1], Msg: m[4], Err: err}
	te.Line, _ = strconv.Atoi(m[2])
	te.Column, _ = strconv.Atoi(m[3])
	var execErr template.ExecError
	if errors.As(err, &execErr) {
		if x := executingRE.FindStringSubmatch(te.Msg); x != nil {
			te.Template, te.Msg = x[1], x[3]
			if msg, ok := strings.CutPrefix(te.Msg, "error calling fail: "); ok {
				te.Fail, te.Msg = true, msg
			}
		}
		return te
	}
	if strings.Contains(te.Msg, "unexpected EOF") {
		te.Msg += " (an [[ if ]], [[ range ]], [[ with ]] or [[ define ]] is missing its [[ end ]])"
	}
	return te
}
