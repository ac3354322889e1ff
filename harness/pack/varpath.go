package pack

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
)

// A dotted variable path reaches inside an object, map or list variable, as
// nomad-pack's templates do (`var "network.mode" .` in the community redis
// pack). The same path works on the command line, so one attribute can be
// overridden without restating the whole object: `--var network.mode=host`.

// resolvePath splits key into the declared variable it starts with and the
// path inside that variable's value. A leading "packname." is dropped, unless
// a variable carries the pack's name.
func (p *Pack) resolvePath(key string) (*Variable, []string, error) {
	if v, ok := p.Variables[key]; ok {
		return v, nil, nil
	}
	segs := strings.Split(key, ".")
	if len(segs) > 1 && (segs[0] == p.Name || segs[0] == p.Metadata["pack"]["name"]) {
		if _, isVar := p.Variables[segs[0]]; !isVar {
			segs = segs[1:]
		}
	}
	if v, ok := p.Variables[segs[0]]; ok {
		return v, segs[1:], nil
	}
	declared := strings.Join(p.VariableNames(), ", ")
	if declared == "" {
		declared = "none"
	}
	if len(segs) > 1 {
		return nil, nil, fmt.Errorf("%q refers to pack %q, but this pack is %q (dependencies are not supported), and no variable %q is declared in %s (declared: %s)",
			key, segs[0], p.Name, segs[0], p.variablesPath(), declared)
	}
	return nil, nil, fmt.Errorf("no variable %q is declared in %s (declared: %s)", key, p.variablesPath(), declared)
}

func (p *Pack) variablesPath() string { return filepath.Join(p.Dir, variablesFile) }

// lookupPath follows path inside a template value (maps and lists as
// goValue makes them), naming the step that fails and what was there.
func lookupPath(name string, val any, path []string) (any, error) {
	at := name
	for _, seg := range path {
		switch cur := val.(type) {
		case map[string]any:
			next, ok := cur[seg]
			if !ok {
				return nil, fmt.Errorf("variable path %q: %s has no attribute %q (it has: %s)", name+"."+strings.Join(path, "."), at, seg, strings.Join(slices.Sorted(maps.Keys(cur)), ", "))
			}
			val = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(cur) {
				return nil, fmt.Errorf("variable path %q: %s is a list of %d; %q is not an index into it", name+"."+strings.Join(path, "."), at, len(cur), seg)
			}
			val = cur[i]
		default:
			return nil, fmt.Errorf("variable path %q: %s is a %T, which has no attribute %q", name+"."+strings.Join(path, "."), at, cur, seg)
		}
		at += "." + seg
	}
	return val, nil
}

// typeAt is the type a path leads to inside t.
func typeAt(name string, t cty.Type, path []string) (cty.Type, error) {
	for i, seg := range path {
		switch {
		case t.IsObjectType():
			if !t.HasAttribute(seg) {
				attrs := make([]string, 0, len(t.AttributeTypes()))
				for a := range t.AttributeTypes() {
					attrs = append(attrs, a)
				}
				sort.Strings(attrs)
				return cty.NilType, fmt.Errorf("%s has no attribute %q (it has: %s)", strings.Join(append([]string{name}, path[:i]...), "."), seg, strings.Join(attrs, ", "))
			}
			t = t.AttributeType(seg)
		case t.IsMapType():
			t = t.ElementType()
		case t == cty.DynamicPseudoType:
			return cty.DynamicPseudoType, nil
		default:
			return cty.NilType, fmt.Errorf("%s is a %s; only attributes of objects and keys of maps can be set by path", strings.Join(append([]string{name}, path[:i]...), "."), typeexpr.TypeString(t))
		}
	}
	return t, nil
}

// setPath returns val with the element at path replaced by leaf.
func setPath(val cty.Value, path []string, leaf cty.Value) (cty.Value, error) {
	if len(path) == 0 {
		return leaf, nil
	}
	t := val.Type()
	if !t.IsObjectType() && !t.IsMapType() {
		return cty.NilVal, fmt.Errorf("%q is inside a %s value", path[0], t.FriendlyName())
	}
	elems := map[string]cty.Value{}
	if !val.IsNull() {
		for it := val.ElementIterator(); it.Next(); {
			k, v := it.Element()
			elems[k.AsString()] = v
		}
	}
	child, ok := elems[path[0]]
	if !ok {
		child = cty.EmptyObjectVal
	}
	next, err := setPath(child, path[1:], leaf)
	if err != nil {
		return cty.NilVal, err
	}
	elems[path[0]] = next
	// An object even where the value was a map: a new key's element may
	// lack attributes its siblings have, which cty.MapVal panics on. The
	// caller converts the whole value back to the declared type, which
	// makes it a map again or says which attribute is missing.
	return cty.ObjectVal(elems), nil
}

// overridePath applies `--var name.a.b=raw` to the variable's current value.
func (v *Variable) overridePath(current cty.Value, path []string, raw string) (cty.Value, error) {
	leafType, err := typeAt(v.Name, v.Type, path)
	if err != nil {
		return cty.NilVal, err
	}
	leaf, err := (&Variable{Name: v.Name + "." + strings.Join(path, "."), Type: leafType}).parseCLIValue(raw)
	if err != nil {
		return cty.NilVal, err
	}
	if current.IsNull() {
		current = cty.EmptyObjectVal
	}
	next, err := setPath(current, path, leaf)
	if err != nil {
		return cty.NilVal, err
	}
	return v.convert(next)
}
