package experiment

import (
	"github.com/hashicorp/hcl/v2"
)

// An app_defaults block holds what several app blocks of a sweep share
// (pack, variants, vars, load settings, a closed_loop or fault block), so a
// spec that compares one deployment under several faults or workloads says
// it once. An app block's own attribute wins over the default; vars merge
// key by key, the app's winning; a block type the app declares replaces
// the default's blocks of that type. Errors in a default point at the
// app_defaults block, where the value is written.

// appDefaults reads the sweep's app_defaults blocks: at most one.
func (p *parser) appDefaults(blocks hcl.Blocks) *hcl.BodyContent {
	var found *hcl.Block
	for _, b := range blocks {
		if b.Type != "app_defaults" {
			continue
		}
		if found != nil {
			p.errorf(b.DefRange, "Duplicate app_defaults block", "only one app_defaults block is allowed; the first is at %s", found.DefRange)
			continue
		}
		found = b
	}
	if found == nil {
		return nil
	}
	content, diags := found.Body.Content(appSchema)
	p.diags = append(p.diags, diags...)
	return content
}

// withDefaults is an app block's content with the defaults filled in;
// vars is left as the app wrote it (mergedVars merges it).
func withDefaults(app, defaults *hcl.BodyContent) *hcl.BodyContent {
	if defaults == nil {
		return app
	}
	out := &hcl.BodyContent{Attributes: hcl.Attributes{}, MissingItemRange: app.MissingItemRange}
	for name, a := range defaults.Attributes {
		out.Attributes[name] = a
	}
	for name, a := range app.Attributes {
		out.Attributes[name] = a
	}
	declared := map[string]bool{}
	for _, b := range app.Blocks {
		declared[b.Type] = true
	}
	out.Blocks = append(out.Blocks, app.Blocks...)
	for _, b := range defaults.Blocks {
		if !declared[b.Type] {
			out.Blocks = append(out.Blocks, b)
		}
	}
	return out
}

// mergedVars is the defaults' vars with the app's own over them, key by key.
func (p *parser) mergedVars(app, defaults *hcl.BodyContent) map[string]any {
	own := p.varsMap(app.Attributes, "vars")
	if defaults == nil {
		return own
	}
	shared := p.varsMap(defaults.Attributes, "vars")
	if shared == nil {
		return own
	}
	out := map[string]any{}
	for k, v := range shared {
		out[k] = v
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}
