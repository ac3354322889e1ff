package experiment

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/orchbench/orchbench/harness/placement"
	"github.com/zclconf/go-cty/cty"
)

// decode converts attribute name into target when present; it reports
// whether a value was stored. Type errors carry the expression's range.
func (p *parser) decode(a hcl.Attributes, name string, target any) bool {
	attr, ok := a[name]
	if !ok {
		return false
	}
	return p.decodeExpr(attr.Expr, target)
}

func (p *parser) decodeExpr(expr hcl.Expression, target any) bool {
	d := gohcl.DecodeExpression(expr, nil, target)
	p.diags = append(p.diags, d...)
	return !d.HasErrors()
}

func (p *parser) duration(a hcl.Attributes, name string, required bool) time.Duration {
	var s string
	if !p.decode(a, name, &s) {
		return 0
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		p.errorf(a[name].Expr.Range(), "Invalid "+name, "%q is not a duration like \"30s\" or \"2m\"", s)
	case d < 0:
		p.errorf(a[name].Expr.Range(), "Invalid "+name, "%s must not be negative", name)
	case required && d == 0:
		p.errorf(a[name].Expr.Range(), "Invalid "+name, "%s must be positive", name)
	}
	return d
}

func (p *parser) varsMap(a hcl.Attributes, name string) map[string]any {
	attr, ok := a[name]
	if !ok {
		return nil
	}
	val, d := attr.Expr.Value(nil)
	p.diags = append(p.diags, d...)
	if d.HasErrors() {
		return nil
	}
	m, ok := ctyToGo(val).(map[string]any)
	if !ok {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s must be an object like { resource_scale = 0.25 }", name)
		return nil
	}
	if _, bad := m["variant"]; bad {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s sets \"variant\", which the matrix sets itself", name)
	}
	if nonFinite(m) {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s holds a number beyond float64's range", name)
	}
	if err := placementVar(m); err != nil {
		p.errorf(attr.Expr.Range(), "Invalid "+name, "%s: %v", name, err)
	}
	return m
}

// placementVar checks the placement variable every pack takes (the harness
// applies it, the pack never sees it), so a typo fails before any deploy.
func placementVar(m map[string]any) error {
	v, ok := m[placement.Variable]
	if !ok {
		return nil
	}
	s, isString := v.(string)
	if !isString {
		return fmt.Errorf("%s must be a string, one of %s", placement.Variable, placement.ModeList())
	}
	_, err := placement.Parse(s)
	return err
}

// nonFinite reports whether a value made by ctyToGo holds an infinity: HCL
// keeps 1e400 exactly, but vars travel on as JSON and --var text, which
// have no infinity (json.Marshal fails, and VarText would pass "+Inf").
func nonFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsInf(x, 0) || math.IsNaN(x)
	case map[string]any:
		for _, e := range x {
			if nonFinite(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if nonFinite(e) {
				return true
			}
		}
	}
	return false
}

func rangeOf(a hcl.Attributes, name string, fallback hcl.Range) hcl.Range {
	if attr, ok := a[name]; ok {
		return attr.Expr.Range()
	}
	return fallback
}

// ctyToGo turns a literal HCL value into plain Go values that survive JSON
// and template rendering: whole numbers become int64, others float64.
func ctyToGo(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			if i, acc := bf.Int64(); acc == big.Exact {
				return i
			}
		}
		f, _ := bf.Float64()
		return f
	case t.IsObjectType() || t.IsMapType():
		out := map[string]any{}
		for k, e := range v.AsValueMap() {
			out[k] = ctyToGo(e)
		}
		return out
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := []any{}
		for _, e := range v.AsValueSlice() {
			out = append(out, ctyToGo(e))
		}
		return out
	}
	return nil
}
