package wrongsetup

import "strings"

// shippingOff is how a row declares that no node agent ships while it runs.
const shippingOff = `shipping = "off"`

// NodesLenientLag is LenientLag on the emulated nodes: the generator runs
// in a container of the client node's own dockerd, beside that node's
// agents and the other nodes' on the same two cores, and a send delayed
// by 58 ms once in 400 (seen at 100 rps) is still the generator gate's
// case, not that of the row testing another gate.
const NodesLenientLag = "max_generator_lag = \"100ms\"\n    "

// OnNodes are the rows as they run on the emulated nodes: the same blocks,
// each declaring shipping = "off", since the nodes run no node agent (a
// row that declared shipping would be invalid for that alone, whatever its
// own gate did), and NodesLenientLag for LenientLag. The faulty server's
// FaultyVars are the test's to fill: the nodes have no exec driver, so it
// runs from an image there.
func OnNodes(rows []Row) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		r.Block = strings.Replace(r.Block, LenientLag, NodesLenientLag, 1)
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
