package translate

import (
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/placement"
)

// A group's Nomad service check becomes a Check the adapter runs itself,
// from outside the container, in the task's network namespace (as Consul
// checks a Nomad task and kubelet probes a pod): a check run inside the
// container would spend the task's own CPU quota, a few per cent of a
// miniature's 0.03 cores, and an orchestrator acting on a check that timed
// out under load would replace a container where Nomad restarts nothing
// without check_restart. A check passing is what "healthy" means for
// WaitHealthy and Endpoints.
type Check struct {
	Type string // "http" or "tcp"
	// Address is host:port inside the task's network namespace.
	Address string
	// Path is the HTTP request path ("" for tcp).
	Path              string
	Interval, Timeout time.Duration
}

func (t *translator) healthCheck(gi *groupInfo, w where, g *api.TaskGroup, task *api.Task) (*Check, error) {
	type owned struct {
		svc   *api.Service
		check api.ServiceCheck
	}
	var checks []owned
	for _, list := range [][]*api.Service{g.Services, task.Services} {
		for _, s := range list {
			for _, c := range s.Checks {
				checks = append(checks, owned{s, c})
			}
		}
	}
	if len(checks) == 0 {
		return nil, nil
	}
	if len(checks) > 1 {
		return nil, w.errorf("%d health checks: one per group is supported (the adapter runs it)", len(checks))
	}
	s, c := checks[0].svc, checks[0].check
	name := c.Name
	if name == "" {
		name = c.Type
	}
	where := "service " + s.Name + " check " + name
	label := c.PortLabel
	if label == "" {
		label = s.PortLabel
	}
	port, ok := gi.ports[label]
	if !ok {
		if n, err := strconv.Atoi(label); err == nil && n > 0 && n < 65536 {
			port = n
		} else {
			return nil, w.errorf("%s: port %q is not a port label of the group", where, label)
		}
	}
	switch {
	case c.Expose:
		return nil, w.errorf("%s: expose is not supported", where)
	case c.GRPCService != "" || c.GRPCUseTLS:
		return nil, w.errorf("%s: grpc options are not supported", where)
	case c.TaskName != "" && c.TaskName != task.Name:
		return nil, w.errorf("%s: task %q is not the group's task", where, c.TaskName)
	}
	target := "127.0.0.1:" + strconv.Itoa(port)
	check := &Check{Type: c.Type, Address: target, Interval: c.Interval, Timeout: c.Timeout}
	switch c.Type {
	case "http":
		switch {
		case c.Protocol != "" && c.Protocol != "http":
			return nil, w.errorf("%s: protocol %q is not supported (only http)", where, c.Protocol)
		case c.Method != "" && !strings.EqualFold(c.Method, "GET"):
			return nil, w.errorf("%s: method %s is not supported (only GET)", where, c.Method)
		case len(c.Header) > 0:
			return nil, w.errorf("%s: header is not supported", where)
		case c.Body != "":
			return nil, w.errorf("%s: body is not supported", where)
		}
		path := c.Path
		if path == "" {
			path = "/"
		}
		if !strings.HasPrefix(path, "/") {
			return nil, w.errorf("%s: path %q does not start with /", where, path)
		}
		if strings.Contains(path, "${") {
			return nil, w.errorf("%s: interpolation in the path is not supported", where)
		}
		check.Path = path
	case "tcp":
	default:
		return nil, w.errorf("%s: type %q is not supported (only http and tcp)", where, c.Type)
	}
	if check.Interval <= 0 {
		check.Interval = 10 * time.Second
	}
	if check.Timeout <= 0 {
		check.Timeout = 2 * time.Second
	}
	if c.SuccessBeforePassing > 1 || c.InitialStatus != "" || c.OnUpdate != "" || c.FailuresBeforeWarning > 0 || c.FailuresBeforeCritical > 0 {
		t.remark(w, where, RemarkIgnored, "success_before_passing/initial_status/on_update/failures_before_* have no counterpart here: an instance is healthy while its check passes")
	}
	if s.CheckRestart != nil || c.CheckRestart != nil {
		t.remark(w, where+" check_restart", RemarkIgnored, "the adapter's check only gates the deployment and the endpoints; nothing restarts a task whose check fails")
	}
	return check, nil
}

// placement maps the group's and task's constraints.
func (t *translator) placement(gw, w where, g *api.TaskGroup, task *api.Task) (Placement, error) {
	var p Placement
	for _, c := range g.Constraints {
		if err := t.constraint(gw, c, &p); err != nil {
			return p, err
		}
	}
	for _, c := range task.Constraints {
		if err := t.constraint(w, c, &p); err != nil {
			return p, err
		}
	}
	if len(task.Affinities) > 0 {
		t.remark(w, "affinity", RemarkIgnored, "soft placement preferences; "+t.target+" places by its own spread")
	}
	return p, nil
}

// constraint honours the trivial constraints: Linux nodes and a Docker
// driver (every node of the target runs Linux containers of Docker images),
// distinct_hosts within a group (at most one replica per node) and a node
// meta key that must not have a value (the placement package's: off the
// client node, on the front end's worker). Any other is an error naming it.
func (t *translator) constraint(w where, c *api.Constraint, p *Placement) error {
	desc := strings.TrimSpace(c.LTarget + " " + c.Operand + " " + c.RTarget)
	op := c.Operand
	if op == "" {
		op = "="
	}
	switch {
	case c.LTarget == "${attr.kernel.name}" && (op == "=" || op == "==") && c.RTarget == "linux":
		t.remark(w, "constraint "+desc, RemarkIgnored, "every "+t.target+" node runs Linux containers here")
		return nil
	case strings.HasPrefix(c.LTarget, "${attr.driver.docker") && (op == "is_set" || op == "=" || op == "=="):
		t.remark(w, "constraint "+desc, RemarkIgnored, "every "+t.target+" node runs the docker driver's images")
		return nil
	case op == "distinct_hosts" && (c.RTarget == "" || c.RTarget == "true"):
		if p == nil {
			return w.errorf("constraint distinct_hosts is not supported here")
		}
		p.MaxPerNode = 1
		return nil
	case op == "!=":
		key, ok := placement.MetaKeyOf(c.LTarget)
		if !ok {
			break
		}
		if p == nil {
			return w.errorf("constraint %q is only supported in a group or task", desc)
		}
		p.NotOn = append(p.NotOn, NodeLabel{Key: key, Value: c.RTarget})
		return nil
	}
	return w.errorf("constraint %q is not supported", desc)
}

// spreads accepts spreading over nodes, which the orchestrators do by default.
func (t *translator) spreads(w where, spreads []*api.Spread) error {
	for _, s := range spreads {
		if (s.Attribute == "${node.unique.id}" || s.Attribute == "${node.unique.name}") && len(s.SpreadTarget) == 0 {
			t.remark(w, "spread "+s.Attribute, RemarkDiffers, t.target+" already spreads a service's replicas over the nodes that fit")
			continue
		}
		return w.errorf("spread over %q is not supported", s.Attribute)
	}
	return nil
}
