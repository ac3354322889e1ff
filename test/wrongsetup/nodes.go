package wrongsetup

import "strings"

// shippingOff is how a row declares that no node agent ships while it runs.
const shippingOff = `shipping = "off"`

// OnNodes are the rows as they run on the emulated nodes: the same blocks,
// each declaring shipping = "off", since the nodes run no node agent (a
// row that declared shipping would be invalid for that alone, whatever its
// own gate did). The faulty server's FaultyVars are the test's to fill:
// the nodes have no exec driver, so it runs from an image there.
func OnNodes(rows []Row) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		if !strings.Contains(r.Block, shippingOff) {
			r.Block += "\n    " + shippingOff
		}
		out[i] = r
	}
	return out
}

// Split parts rows into those named by apps and the rest, each in rows'
// order.
func Split(rows []Row, apps ...string) (named, rest []Row) {
	for _, r := range rows {
		if contains(apps, r.App) {
			named = append(named, r)
		} else {
			rest = append(rest, r)
		}
	}
	return named, rest
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
