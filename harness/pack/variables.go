package pack

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Variable is one `variable "name" { ... }` declaration.
type Variable struct {
	Name        string
	Description string
	// Type is the declared type constraint; cty.DynamicPseudoType when the
	// declaration has no type (any value accepted, as in nomad-pack).
	Type cty.Type
	// Default is already converted to Type; a null value means no default.
	Default cty.Value
	// DeclRange points at the declaration for error messages.
	DeclRange hcl.Range

	typeDefaults *typeexpr.Defaults
}

// loadVariables parses variables.hcl. A pack without the file simply has no
// variables, which nomad-pack allows too.
func loadVariables(path string) (map[string]*Variable, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]*Variable{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseVariables(src, path)
}

// parseVariables reads the declarations of a variables.hcl held in memory;
// path is used in messages.
func parseVariables(src []byte, path string) (map[string]*Variable, error) {
	vars := map[string]*Variable{}
	body, err := parseHCLSource(src, path)
	if err != nil {
		return nil, err
	}
	for name, attr := range body.Attributes {
		return nil, fmt.Errorf("%s: unexpected attribute %q; variables are declared as variable %q { type = ..., default = ... }", attr.SrcRange, name, name)
	}
	for _, block := range body.Blocks {
		if block.Type != "variable" || len(block.Labels) != 1 {
			return nil, fmt.Errorf("%s: expected variable \"name\" { ... }, found %s block", block.TypeRange, block.Type)
		}
		v, err := decodeVariable(block)
		if err != nil {
			return nil, err
		}
		if prev, dup := vars[v.Name]; dup {
			return nil, fmt.Errorf("%s: variable %q is declared twice (first at %s)", block.TypeRange, v.Name, prev.DeclRange)
		}
		vars[v.Name] = v
	}
	return vars, nil
}

func decodeVariable(block *hclsyntax.Block) (*Variable, error) {
	v := &Variable{
		Name:      block.Labels[0],
		Type:      cty.DynamicPseudoType,
		Default:   cty.NullVal(cty.DynamicPseudoType),
		DeclRange: block.DefRange(),
	}
	if !hclsyntax.ValidIdentifier(v.Name) {
		return nil, fmt.Errorf("%s: %q is not a valid variable name", block.LabelRanges[0], v.Name)
	}
	for _, inner := range block.Body.Blocks {
		return nil, fmt.Errorf("%s: unexpected %s block in variable %q (only type, default and description are supported)", inner.TypeRange, inner.Type, v.Name)
	}
	for name, attr := range block.Body.Attributes {
		switch name {
		case "type":
			ty, defaults, diags := typeexpr.TypeConstraintWithDefaults(attr.Expr)
			if diags.HasErrors() {
				return nil, fmt.Errorf("variable %q: %w", v.Name, diagError(diags))
			}
			v.Type, v.typeDefaults = ty, defaults
		case "description":
			d, diags := attr.Expr.Value(nil)
			if diags.HasErrors() {
				return nil, diagError(diags)
			}
			if d.Type() != cty.String || d.IsNull() {
				return nil, fmt.Errorf("%s: description of variable %q must be a string", attr.SrcRange, v.Name)
			}
			v.Description = d.AsString()
		case "default":
			// Converted below, once the type is known regardless of the
			// order the attributes appear in.
		default:
			return nil, fmt.Errorf("%s: unsupported argument %q in variable %q (only type, default and description are supported)", attr.SrcRange, name, v.Name)
		}
	}
	if attr, ok := block.Body.Attributes["default"]; ok {
		raw, diags := attr.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, fmt.Errorf("variable %q: %w", v.Name, diagError(diags))
		}
		val, err := v.convert(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: default of variable %q: %v (%s)", attr.Expr.Range(), v.Name, err, v.describe())
		}
		v.Default = val
	}
	return v, nil
}

// convert coerces a value to the declared type, applying optional-attribute
// defaults first as Terraform and nomad-pack do.
func (v *Variable) convert(val cty.Value) (cty.Value, error) {
	if v.typeDefaults != nil {
		val = v.typeDefaults.Apply(val)
	}
	out, err := convert.Convert(val, v.Type)
	if err != nil {
		return cty.NilVal, err
	}
	return out, nil
}

// describe names the variable's type and declaration for error messages.
func (v *Variable) describe() string {
	return fmt.Sprintf("variable %q has type %s, declared at %s:%d",
		v.Name, typeexpr.TypeString(v.Type), v.DeclRange.Filename, v.DeclRange.Start.Line)
}

// parseCLIValue turns the text after `--var name=` into a value of the
// variable's type. Like Terraform and nomad-pack, strings are taken
// literally and everything else is parsed as an HCL expression, so
// `--var datacenters='["dc1","dc2"]'` and `--var scale=4` both work.
func (v *Variable) parseCLIValue(raw string) (cty.Value, error) {
	switch {
	case v.Type == cty.String, v.Type == cty.DynamicPseudoType:
		return cty.StringVal(raw), nil
	case v.Type.IsPrimitiveType():
		// Letting cty convert the string gives "a number is required"
		// rather than a confusing "variables not allowed" for --var n=abc.
		return v.convert(cty.StringVal(strings.TrimSpace(raw)))
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), "--var "+v.Name, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("%q is not a valid HCL expression for a %s: %s", raw, typeexpr.TypeString(v.Type), diags[0].Summary)
	}
	val, diags := expr.Value(nil)
	if diags.HasErrors() {
		msg := diagError(diags).Error()
		if strings.Contains(msg, "Variables not allowed") {
			msg += ` (quote strings inside lists and maps: --var 'datacenters=["dc1"]')`
		}
		return cty.NilVal, fmt.Errorf("%q cannot be evaluated: %s", raw, msg)
	}
	return v.convert(val)
}

// Values holds one render's resolved variable values.
type Values map[string]cty.Value

// resolveValues applies defaults, then each var file in order, then the
// --var overrides, which is nomad-pack's precedence.
func (p *Pack) resolveValues(overrides map[string]string, varFiles []string) (Values, error) {
	vals := Values{}
	for name, v := range p.Variables {
		vals[name] = v.Default
	}
	for _, f := range varFiles {
		if err := p.applyVarFile(vals, f); err != nil {
			return nil, err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(overrides)) {
		if err := p.applyOverride(vals, key, overrides[key]); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// applyOverride applies one `--var key=raw`, key being a variable or a
// dotted path inside one.
func (p *Pack) applyOverride(vals Values, key, raw string) error {
	v, path, err := p.resolvePath(key)
	if err != nil {
		return fmt.Errorf("--var %s=%s: %w", key, raw, err)
	}
	var val cty.Value
	if len(path) == 0 {
		val, err = v.parseCLIValue(raw)
	} else {
		val, err = v.overridePath(vals[v.Name], path, raw)
	}
	if err != nil {
		return fmt.Errorf("--var %s=%s: %w (%s)", key, raw, err, v.describe())
	}
	vals[v.Name] = val
	return nil
}

// applyVarFile reads a nomad-pack variable file. nomad-pack accepts both
// `name = value` and `packname.name = value`; the dotted form is not valid
// HCL, so the "packname." prefix is blanked out with spaces before parsing,
// which keeps every line and column in error messages accurate.
func (p *Pack) applyVarFile(vals Values, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("variable file: %w", err)
	}
	return p.applyVarSource(vals, src, path)
}

// applyVarSource applies a variable file held in memory; path is used in
// messages.
func (p *Pack) applyVarSource(vals Values, src []byte, path string) error {
	src, err := p.stripPackPrefixes(src, path)
	if err != nil {
		return err
	}
	body, err := parseHCLSource(src, path)
	if err != nil {
		return err
	}
	for _, block := range body.Blocks {
		return fmt.Errorf("%s: unexpected %s block; a variable file holds only name = value lines", block.TypeRange, block.Type)
	}
	for _, name := range slices.Sorted(maps.Keys(body.Attributes)) {
		attr := body.Attributes[name]
		v, path, err := p.resolvePath(name)
		if err == nil && len(path) > 0 {
			err = fmt.Errorf("%q is a path inside variable %q; a variable file sets whole variables", name, v.Name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", attr.NameRange, err)
		}
		raw, diags := attr.Expr.Value(nil)
		if diags.HasErrors() {
			return diagError(diags)
		}
		val, err := v.convert(raw)
		if err != nil {
			return fmt.Errorf("%s: %s: %w (%s)", attr.Expr.Range(), name, err, v.describe())
		}
		vals[v.Name] = val
	}
	return nil
}

func (p *Pack) stripPackPrefixes(src []byte, path string) ([]byte, error) {
	tokens, diags := hclsyntax.LexConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diagError(diags)
	}
	out := append([]byte(nil), src...)
	depth := 0
	lineStart := true
	for i, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			depth++
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenTemplateSeqEnd:
			depth--
		}
		startsAttribute := depth == 0 && lineStart && tok.Type == hclsyntax.TokenIdent &&
			i+3 < len(tokens) && tokens[i+1].Type == hclsyntax.TokenDot &&
			tokens[i+2].Type == hclsyntax.TokenIdent && tokens[i+3].Type == hclsyntax.TokenEqual
		if startsAttribute {
			prefix := string(tok.Bytes)
			if prefix != p.Name && prefix != p.Metadata["pack"]["name"] {
				return nil, fmt.Errorf("%s: %s.%s refers to pack %q, but this pack is %q (dependencies are not supported)",
					tok.Range, prefix, tokens[i+2].Bytes, prefix, p.Name)
			}
			for b := tok.Range.Start.Byte; b < tokens[i+1].Range.End.Byte; b++ {
				out[b] = ' '
			}
		}
		lineStart = tok.Type == hclsyntax.TokenNewline || (lineStart && tok.Type == hclsyntax.TokenComment)
	}
	return out, nil
}

// goValue converts a cty value into plain Go values for text/template, the
// way nomad-pack exposes variables: whole numbers become int so `[[ if eq
// (var "count" .) 1 ]]` works, other numbers float64, lists []any and maps
// and objects map[string]any.
func goValue(v cty.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, errors.New("value is not known")
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Bool:
		return v.True(), nil
	case t == cty.Number:
		return goNumber(v.AsBigFloat()), nil
	case t.IsListType(), t.IsSetType(), t.IsTupleType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			gv, err := goValue(ev)
			if err != nil {
				return nil, err
			}
			out = append(out, gv)
		}
		return out, nil
	case t.IsMapType(), t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			gv, err := goValue(ev)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = gv
		}
		return out, nil
	case t.IsCapsuleType():
		return v.EncapsulatedValue(), nil
	}
	return nil, fmt.Errorf("cannot use a %s in a template", t.FriendlyName())
}

func goNumber(f *big.Float) any {
	if f.IsInf() {
		return math.Inf(f.Sign())
	}
	if i, acc := f.Int64(); acc == big.Exact && i >= math.MinInt && i <= math.MaxInt {
		return int(i)
	}
	out, _ := f.Float64()
	return out
}
