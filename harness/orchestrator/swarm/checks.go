package swarm

import (
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/swarm"
)

// Health checks run inside the container, with the static checker every
// orchbench image carries at CheckerPath:
//
//	http  ["CMD", "/orchbench-check", "http", "127.0.0.1:<port><path>"]
//	tcp   ["CMD", "/orchbench-check", "tcp", "127.0.0.1:<port>"]
//
// Interval and timeout are the check's (Docker's defaults of 30 s / 30 s
// otherwise), and the start period is check_restart.grace or
// defaultStartPeriod: failures during it do not count, and the first pass
// ends it. Swarm replaces a container whose check fails retries times in a
// row, while Nomad restarts nothing on a failing check unless the service
// has check_restart: so retries are check_restart's limit when there is one,
// and otherwise so many that a check failing under load (the checker runs
// inside the container, on its CPU quota) never ends the task; the check
// then only gates the deployment, as Consul's does on Nomad.
const (
	neverUnhealthy     = 1 << 30
	defaultStartPeriod = 30 * time.Second
)

func (t *translator) healthCheck(gi *groupInfo, w where, g *api.TaskGroup, task *api.Task) (*container.HealthConfig, error) {
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
			if s.CheckRestart != nil {
				t.remark(w, "service "+s.Name+" check_restart", RemarkDiffers, "Swarm replaces the container (a new task) where Nomad restarts the task in place")
			}
		}
	}
	if len(checks) == 0 {
		return nil, nil
	}
	if len(checks) > 1 {
		return nil, w.errorf("%d health checks: a Docker container has one health check", len(checks))
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
	var test []string
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
		test = []string{"CMD", CheckerPath, "http", target + path}
	case "tcp":
		test = []string{"CMD", CheckerPath, "tcp", target}
	default:
		return nil, w.errorf("%s: type %q is not supported (only http and tcp)", where, c.Type)
	}
	hc := &container.HealthConfig{
		Test:        test,
		Interval:    c.Interval,
		Timeout:     c.Timeout,
		Retries:     neverUnhealthy,
		StartPeriod: defaultStartPeriod,
	}
	restart := c.CheckRestart
	if restart == nil {
		restart = s.CheckRestart
	}
	if restart != nil && restart.Limit > 0 {
		hc.Retries = restart.Limit
	}
	if c.CheckRestart != nil && c.CheckRestart.Grace != nil && *c.CheckRestart.Grace > 0 {
		hc.StartPeriod = *c.CheckRestart.Grace
	} else if s.CheckRestart != nil && s.CheckRestart.Grace != nil && *s.CheckRestart.Grace > 0 {
		hc.StartPeriod = *s.CheckRestart.Grace
	}
	if c.SuccessBeforePassing > 1 || c.InitialStatus != "" || c.OnUpdate != "" || c.FailuresBeforeWarning > 0 {
		t.remark(w, where, RemarkIgnored, "success_before_passing/initial_status/on_update/failures_before_warning have no Docker counterpart; a container is healthy after one pass")
	}
	return hc, nil
}

// placement maps the group's and task's constraints.
func (t *translator) placement(gw, w where, g *api.TaskGroup, task *api.Task) (*swarm.Placement, error) {
	p := &swarm.Placement{}
	for _, c := range g.Constraints {
		if err := t.constraint(gw, c, p); err != nil {
			return nil, err
		}
	}
	for _, c := range task.Constraints {
		if err := t.constraint(w, c, p); err != nil {
			return nil, err
		}
	}
	if len(task.Affinities) > 0 {
		t.remark(w, "affinity", RemarkIgnored, "soft placement preferences; Swarm places by its own spread")
	}
	if p.MaxReplicas == 0 && len(p.Constraints) == 0 {
		return nil, nil
	}
	return p, nil
}

// constraint honours the trivial constraints: Linux nodes and a Docker
// driver (every Swarm node is both) and distinct_hosts within a group (at
// most one replica per node). Any other is an error naming it.
func (t *translator) constraint(w where, c *api.Constraint, p *swarm.Placement) error {
	desc := strings.TrimSpace(c.LTarget + " " + c.Operand + " " + c.RTarget)
	op := c.Operand
	if op == "" {
		op = "="
	}
	switch {
	case c.LTarget == "${attr.kernel.name}" && (op == "=" || op == "==") && c.RTarget == "linux":
		t.remark(w, "constraint "+desc, RemarkIgnored, "every Swarm node runs Linux containers here")
		return nil
	case strings.HasPrefix(c.LTarget, "${attr.driver.docker") && (op == "is_set" || op == "=" || op == "=="):
		t.remark(w, "constraint "+desc, RemarkIgnored, "every Swarm node runs Docker")
		return nil
	case op == "distinct_hosts" && (c.RTarget == "" || c.RTarget == "true"):
		if p == nil {
			return w.errorf("constraint distinct_hosts is not supported here")
		}
		p.MaxReplicas = 1
		return nil
	}
	return w.errorf("constraint %q is not supported", desc)
}

// spreads accepts spreading over nodes, which Swarm does by default.
func (t *translator) spreads(w where, spreads []*api.Spread) error {
	for _, s := range spreads {
		if (s.Attribute == "${node.unique.id}" || s.Attribute == "${node.unique.name}") && len(s.SpreadTarget) == 0 {
			t.remark(w, "spread "+s.Attribute, RemarkDiffers, "Swarm already spreads a service's replicas over the nodes that fit")
			continue
		}
		return w.errorf("spread over %q is not supported", s.Attribute)
	}
	return nil
}
