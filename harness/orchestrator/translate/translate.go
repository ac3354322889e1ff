package translate

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
)

// metaEntry names the measured service, whose port is published on the node.
const metaEntry = contract.KeyService

// AllocDataDir is the group data directory Nomad gives every allocation;
// adapters give each replica a volume of its own there.
const AllocDataDir = "/alloc/data"

// where names the job, group and task a message is about.
type where struct{ prefix, job, group, task string }

func (w where) String() string {
	s := "job " + w.job
	if w.group != "" {
		s += ", group " + w.group
	}
	if w.task != "" {
		s += ", task " + w.task
	}
	return s
}

func (w where) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", w.prefix, w, fmt.Sprintf(format, args...))
}

type translator struct {
	job     *api.Job
	name    string
	opts    Options
	target  string // opts.Target.Name, for messages
	plan    *Plan
	groups  []*groupInfo
	byName  map[string]*groupInfo // Consul service name → its group
	portsOf map[string]int        // Consul service name → container port
}

// groupInfo is what the first pass learns about a group: its names and ports.
type groupInfo struct {
	g      *api.TaskGroup
	w      where
	name   string
	consul []string
	ports  map[string]int
	// consulPort maps each Consul service name of the group to its port label.
	consulPort map[string]string
}

// Translate reads one Nomad job into a plan for opts.Target.
func Translate(job *api.Job, opts Options) (*Plan, error) {
	if opts.Target.Name == "" {
		return nil, errors.New("translate: Options.Target has no name")
	}
	prefix := opts.Target.prefix()
	if job == nil {
		return nil, fmt.Errorf("%s: no job", prefix)
	}
	name := deref(job.ID)
	if name == "" {
		name = deref(job.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("%s: job without an ID", prefix)
	}
	t := &translator{job: job, name: name, opts: opts, target: opts.Target.Name, byName: map[string]*groupInfo{}, portsOf: map[string]int{}}
	v, err := version(job, opts)
	if err != nil {
		return nil, err
	}
	t.plan = &Plan{Job: name, Version: v}
	jw := t.where("", "")
	if !validName(name) {
		return nil, jw.errorf("the job's ID is not a DNS label (%s)", nameRule)
	}
	if err := t.jobStanzas(); err != nil {
		return nil, err
	}
	if len(job.TaskGroups) == 0 {
		return nil, jw.errorf("the job has no group")
	}
	seen := map[string]string{}
	for _, g := range job.TaskGroups {
		gi, err := t.scanGroup(g)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[gi.name]; dup {
			return nil, gi.w.errorf("its %s service name %s is also group %s's", t.target, gi.name, other)
		}
		seen[gi.name] = gi.w.group
		for _, c := range gi.consul {
			if other, dup := t.byName[c]; dup && other != gi {
				return nil, gi.w.errorf("Consul service %s is also registered by group %s: %s DNS gives a name to one service", c, other.w.group, t.target)
			}
			t.byName[c] = gi
			t.portsOf[c] = gi.ports[gi.consulPort[c]]
		}
		t.groups = append(t.groups, gi)
	}
	for _, gi := range t.groups {
		svc, err := t.translateGroup(gi)
		if err != nil {
			return nil, err
		}
		t.plan.Services = append(t.plan.Services, svc)
	}
	if err := t.entry(); err != nil {
		return nil, err
	}
	return t.plan, nil
}

func (t *translator) where(group, task string) where {
	return where{prefix: t.opts.Target.prefix(), job: t.name, group: group, task: task}
}

func (t *translator) remark(w where, stanza, kind, why string) {
	t.plan.Remarks = append(t.plan.Remarks, Remark{Where: w.String(), Stanza: stanza, Kind: kind, Why: why})
}

// jobStanzas checks the job-level stanzas.
func (t *translator) jobStanzas() error {
	j, w := t.job, t.where("", "")
	if typ := deref(j.Type); typ != "" && typ != "service" {
		return w.errorf("type %q is not supported (only service jobs become %s services)", typ, t.target)
	}
	switch {
	case j.Periodic != nil:
		return w.errorf("periodic is not supported")
	case j.ParameterizedJob != nil:
		return w.errorf("parameterized is not supported")
	case j.Multiregion != nil:
		return w.errorf("multiregion is not supported")
	}
	if len(j.Datacenters) > 0 || deref(j.Region) != "" {
		t.remark(w, "region/datacenters", RemarkIgnored, "the job runs on the one "+t.target+" cluster the adapter talks to")
	}
	if j.Update != nil {
		t.remark(w, "update", RemarkIgnored, "group update stanzas are read instead; "+t.target+" has no job-wide update")
	}
	if j.Reschedule != nil || j.Migrate != nil {
		t.remark(w, "reschedule/migrate", RemarkIgnored, t.opts.Target.reschedule())
	}
	if j.Priority != nil || j.AllAtOnce != nil || j.NodePool != nil || j.UI != nil {
		t.remark(w, "priority/all_at_once/node_pool/ui", RemarkIgnored, "no "+t.target+" counterpart, no effect on one cluster")
	}
	if len(j.Meta) > 0 {
		t.remark(w, "meta", RemarkIgnored, "read for the resource intent and the measured service, not passed to containers")
	}
	if len(j.Affinities) > 0 {
		t.remark(w, "affinity", RemarkIgnored, "soft placement preferences; "+t.target+" places by its own spread")
	}
	if len(j.Spreads) > 0 {
		if err := t.spreads(w, j.Spreads); err != nil {
			return err
		}
	}
	for _, c := range j.Constraints {
		if c.Operand == "distinct_hosts" {
			return w.errorf("constraint distinct_hosts at job level is not supported (replicas per node are limited within one group; put it in the group)")
		}
		if err := t.constraint(w, c, nil); err != nil {
			return err
		}
	}
	return nil
}

// scanGroup learns a group's service name, Consul names and port numbers.
func (t *translator) scanGroup(g *api.TaskGroup) (*groupInfo, error) {
	gi := &groupInfo{g: g, w: t.where(deref(g.Name), ""), consulPort: map[string]string{}}
	if gi.w.group == "" {
		return nil, gi.w.errorf("a group has no name")
	}
	var err error
	if gi.ports, err = t.groupPorts(gi.w, g); err != nil {
		return nil, err
	}
	add := func(svcs []*api.Service) error {
		for _, s := range svcs {
			if s.Name == "" {
				return gi.w.errorf("a service stanza has no name (Nomad's default name is not derived here)")
			}
			if prev, ok := gi.consulPort[s.Name]; ok {
				if prev != s.PortLabel {
					return gi.w.errorf("service %s is registered twice with different ports", s.Name)
				}
				continue
			}
			if s.PortLabel != "" {
				if _, ok := gi.ports[s.PortLabel]; !ok {
					return gi.w.errorf("service %s: port %q is not a port label of the group's network", s.Name, s.PortLabel)
				}
			}
			gi.consulPort[s.Name] = s.PortLabel
			gi.consul = append(gi.consul, s.Name)
		}
		return nil
	}
	if err := add(g.Services); err != nil {
		return nil, err
	}
	for _, task := range g.Tasks {
		if err := add(task.Services); err != nil {
			return nil, err
		}
	}
	// Orchestrators' service names are global, Consul's are not: two variants
	// of one app (two jobs) both register "taewa". So the service is named
	// for the job and group, and the adapter resolves every Consul name on
	// the job's own network, where the job's tasks look their upstreams up.
	gi.name = t.name + "-" + gi.w.group
	if !validName(gi.name) {
		return nil, gi.w.errorf("%q is not a valid %s service name (%s)", gi.name, t.target, nameRule)
	}
	for _, c := range gi.consul {
		if !validName(c) {
			return nil, gi.w.errorf("Consul service name %q is not a valid DNS name on %s (%s)", c, t.target, nameRule)
		}
	}
	return gi, nil
}

// DNS-1035 labels: what Kubernetes requires of a Service's name, and a
// name every DNS resolver on the job's network answers for.
var nameRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

const nameRule = "a DNS label: lower-case letters, digits and '-', at most 63 characters, starting with a letter and ending with a letter or digit"

func validName(s string) bool { return len(s) <= 63 && nameRE.MatchString(s) }

// entry names the measured service, whose port the adapter publishes.
func (t *translator) entry() error {
	name, ok := t.job.Meta[metaEntry]
	if !ok || name == "" {
		return nil
	}
	gi, ok := t.byName[name]
	if !ok {
		return t.where("", "").errorf("meta %s names service %q, which no group registers", metaEntry, name)
	}
	port := t.portsOf[name]
	if port == 0 {
		return gi.w.errorf("service %s (meta %s) has no port to publish", name, metaEntry)
	}
	t.plan.Entry = &Entry{Service: gi.name, Port: port}
	return nil
}

func stringList(w where, field string, v any) ([]string, error) {
	switch l := v.(type) {
	case []string:
		return l, nil
	case []any:
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, w.errorf("%s[%d] is not a string", field, i)
			}
			out[i] = s
		}
		return out, nil
	case string:
		return []string{l}, nil
	}
	return nil, w.errorf("%s must be a list of strings", field)
}

var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

func validEnvKey(k string) bool { return envKeyRE.MatchString(k) }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
