package pack

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MHzVariable is the variable through which a pack turns declared cores
// into Nomad's MHz; its value must be the node's fingerprinted figure for
// the CPU limits to come out right.
const MHzVariable = "mhz_per_core"

// RenderSized renders the pack as Render does and, when the pack declares
// mhz_per_core and neither an override nor a var file sets it, fills in
// the node's figure from mhzPerCore (asked only then). The CLI and the
// sweep both render through here, so a pack deployed by hand and one
// deployed by a sweep are the same job. A nil mhzPerCore keeps the pack's
// default (rendering without a cluster).
func (p *Pack) RenderSized(overrides map[string]string, varFiles []string, mhzPerCore func() (float64, error)) (*Rendered, error) {
	if _, declared := p.Variables[MHzVariable]; declared && mhzPerCore != nil && !sets(MHzVariable, overrides, varFiles) {
		mhz, err := mhzPerCore()
		if err != nil {
			return nil, fmt.Errorf("pack %s: %s is not set and the node's figure is unknown: %w", p.Name, MHzVariable, err)
		}
		withMHz := map[string]string{MHzVariable: strconv.FormatFloat(mhz, 'f', -1, 64)}
		for k, v := range overrides {
			withMHz[k] = v
		}
		overrides = withMHz
	}
	return p.Render(overrides, varFiles)
}

// sets reports whether an override or a var file gives the variable a value
// (plainly or as packname.name).
func sets(name string, overrides map[string]string, varFiles []string) bool {
	for k := range overrides {
		k = strings.TrimSpace(k)
		if k == name || strings.HasSuffix(k, "."+name) {
			return true
		}
	}
	for _, file := range varFiles {
		if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), name) {
			return true
		}
	}
	return false
}
