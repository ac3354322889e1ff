package translate

import (
	"sort"

	"github.com/hashicorp/nomad/api"
)

// firstDynamicPort is where container ports of labels without `to` or `static` start.
const firstDynamicPort = 8000

// groupPorts numbers a group's port labels (see the package comment).
func (t *translator) groupPorts(w where, g *api.TaskGroup) (map[string]int, error) {
	ports := map[string]int{}
	if len(g.Networks) > 1 {
		return nil, w.errorf("more than one network stanza is not supported")
	}
	if len(g.Networks) == 0 {
		return ports, nil
	}
	n := g.Networks[0]
	switch n.Mode {
	case "", "host", "bridge":
	default:
		return nil, w.errorf("network mode %q is not supported (host and bridge become %s)", n.Mode, t.opts.Target.network())
	}
	switch {
	case n.DNS != nil:
		return nil, w.errorf("network.dns is not supported")
	case n.CNI != nil:
		return nil, w.errorf("network.cni is not supported")
	case n.Device != "" || n.CIDR != "" || n.IP != "":
		return nil, w.errorf("network device/cidr/ip is not supported")
	}
	var dynamic []string
	taken := map[int]string{}
	claim := func(label string, port int) error {
		if other, ok := taken[port]; ok {
			return w.errorf("port labels %s and %s both want container port %d", other, label, port)
		}
		taken[port] = label
		ports[label] = port
		return nil
	}
	all := append(append([]api.Port{}, n.ReservedPorts...), n.DynamicPorts...)
	for _, p := range all {
		if p.Label == "" {
			return nil, w.errorf("a port has no label")
		}
		if _, dup := ports[p.Label]; dup {
			return nil, w.errorf("port label %s is declared twice", p.Label)
		}
		if p.HostNetwork != "" {
			return nil, w.errorf("port %s: host_network is not supported", p.Label)
		}
		switch {
		case p.To > 0:
			if err := claim(p.Label, p.To); err != nil {
				return nil, err
			}
		case p.Value > 0:
			if err := claim(p.Label, p.Value); err != nil {
				return nil, err
			}
		default:
			dynamic = append(dynamic, p.Label)
			ports[p.Label] = 0
		}
	}
	sort.Strings(dynamic)
	next := firstDynamicPort
	for _, label := range dynamic {
		for taken[next] != "" {
			next++
		}
		taken[next] = label
		ports[label] = next
		next++
	}
	return ports, nil
}
