// Package swarm runs the packs' rendered Nomad jobs on Docker Swarm. The job
// stays the single source of truth: Translate turns it into Swarm service
// specs, one service per task group, and refuses (naming the job, group,
// task and stanza) whatever it cannot honour. Stanzas that mean nothing on
// Swarm are never dropped silently: the plan lists each as a Remark.
//
// Networking is the adapter's: every service of a job is attached to one
// overlay network, orchbench-<job>, resolved by DNS round robin (dnsrr:
// the service name answers with every replica's address), and the job's
// measured service publishes its port on the node in host mode. Nomad's
// host and bridge network modes both become that attachment.
//
// Container ports. A group's port label gets the container port its `to`
// names; without one, its `static` port; without either (a dynamic port, as
// in host networking), the first port from 8000 up, in label order, that no
// other label of the group claims. Each service has its own address on the
// overlay network, so these never collide across services.
package swarm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/api/types/swarm"
	"github.com/orchbench/orchbench/harness/contract"
)

// Labels set on every service, container and volume the adapter creates.
const (
	LabelJob     = "orchbench.job"
	LabelGroup   = "orchbench.group"
	LabelTask    = "orchbench.task"
	LabelVersion = "orchbench.version"
	LabelService = "orchbench.service"
)

// metaEntry names the measured service, whose port is published on the node.
const metaEntry = contract.KeyService

// AllocDataDir is the group data directory Nomad gives every allocation;
// on Swarm it is a named volume per service and slot.
const AllocDataDir = "/alloc/data"

// firstDynamicPort is where container ports of labels without `to` or `static` start.
const firstDynamicPort = 8000

// translatorRevision is part of the version label: a change to the
// translation rules re-creates services that an older rule made.
const translatorRevision = "2"

// where names the job, group and task a message is about.
type where struct{ job, group, task string }

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
	return fmt.Errorf("swarm: %s: %s", w, fmt.Sprintf(format, args...))
}

type translator struct {
	job     *api.Job
	name    string
	opts    Options
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

// Translate turns one Nomad job into Swarm service specs.
func Translate(job *api.Job, opts Options) (*Plan, error) {
	if job == nil {
		return nil, errors.New("swarm: no job")
	}
	name := deref(job.ID)
	if name == "" {
		name = deref(job.Name)
	}
	if name == "" {
		return nil, errors.New("swarm: job without an ID")
	}
	t := &translator{job: job, name: name, opts: opts, byName: map[string]*groupInfo{}, portsOf: map[string]int{}}
	version, err := jobVersion(job, opts)
	if err != nil {
		return nil, err
	}
	t.plan = &Plan{Job: name, Version: version, Network: "orchbench-" + name}
	if err := t.jobStanzas(); err != nil {
		return nil, err
	}
	if len(job.TaskGroups) == 0 {
		return nil, where{job: name}.errorf("the job has no group")
	}
	seen := map[string]string{}
	for _, g := range job.TaskGroups {
		gi, err := t.scanGroup(g)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[gi.name]; dup {
			return nil, gi.w.errorf("its Swarm service name %s is also group %s's", gi.name, other)
		}
		seen[gi.name] = gi.w.group
		for _, c := range gi.consul {
			if other, dup := t.byName[c]; dup && other != gi {
				return nil, gi.w.errorf("Consul service %s is also registered by group %s: Swarm DNS gives a name to one service", c, other.w.group)
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

// jobVersion hashes what decides the services: the job (less the fields a
// Nomad server fills in), the options and the translator's revision.
func jobVersion(job *api.Job, opts Options) (string, error) {
	j := *job
	j.Stop, j.Status, j.StatusDescription, j.Stable = nil, nil, nil, nil
	j.Version, j.SubmitTime, j.CreateIndex, j.ModifyIndex, j.JobModifyIndex = nil, nil, nil, nil, nil
	j.VersionTag, j.NomadTokenID = nil, nil
	b, err := json.Marshal(struct {
		Revision string
		Options  Options
		Job      *api.Job
	}{translatorRevision, opts, &j})
	if err != nil {
		return "", fmt.Errorf("swarm: job %s: hash the job spec: %w", deref(job.ID), err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

func (t *translator) remark(w where, stanza, kind, why string) {
	t.plan.Remarks = append(t.plan.Remarks, Remark{Where: w.String(), Stanza: stanza, Kind: kind, Why: why})
}

// jobStanzas checks the job-level stanzas.
func (t *translator) jobStanzas() error {
	j, w := t.job, where{job: t.name}
	if typ := deref(j.Type); typ != "" && typ != "service" {
		return w.errorf("type %q is not supported (only service jobs become Swarm services)", typ)
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
		t.remark(w, "region/datacenters", RemarkIgnored, "the job runs on the one Swarm the adapter talks to")
	}
	if j.Update != nil {
		t.remark(w, "update", RemarkIgnored, "group update stanzas are read instead; Swarm has no job-wide update")
	}
	if j.Reschedule != nil || j.Migrate != nil {
		t.remark(w, "reschedule/migrate", RemarkIgnored, "Swarm replaces a failed task as a new container under the restart policy (from restart)")
	}
	if j.Priority != nil || j.AllAtOnce != nil || j.NodePool != nil || j.UI != nil {
		t.remark(w, "priority/all_at_once/node_pool/ui", RemarkIgnored, "no Swarm counterpart, no effect on one cluster")
	}
	if len(j.Meta) > 0 {
		t.remark(w, "meta", RemarkIgnored, "read for the resource intent and the measured service, not passed to containers")
	}
	if len(j.Affinities) > 0 {
		t.remark(w, "affinity", RemarkIgnored, "soft placement preferences; Swarm places by its own spread")
	}
	if len(j.Spreads) > 0 {
		if err := t.spreads(w, j.Spreads); err != nil {
			return err
		}
	}
	for _, c := range j.Constraints {
		if c.Operand == "distinct_hosts" {
			return w.errorf("constraint distinct_hosts at job level is not supported (Swarm limits replicas per node only within one service; put it in the group)")
		}
		if err := t.constraint(w, c, nil); err != nil {
			return err
		}
	}
	return nil
}

// scanGroup learns a group's Swarm name, Consul names and port numbers.
func (t *translator) scanGroup(g *api.TaskGroup) (*groupInfo, error) {
	gi := &groupInfo{g: g, w: where{job: t.name, group: deref(g.Name)}, consulPort: map[string]string{}}
	if gi.w.group == "" {
		return nil, gi.w.errorf("a group has no name")
	}
	var err error
	if gi.ports, err = groupPorts(gi.w, g); err != nil {
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
	// Swarm service names are global, Consul's are not: two variants of one
	// app (two jobs) both register "taewa". So the Swarm service is named for
	// the job and group, and every Consul name is an alias on the job's own
	// overlay network, where the job's tasks look their upstreams up.
	gi.name = t.name + "-" + gi.w.group
	if !validServiceName(gi.name) {
		return nil, gi.w.errorf("%q is not a valid Swarm service name (letters, digits, '-' and '_', at most 63 characters, starting and ending with a letter or digit)", gi.name)
	}
	for _, c := range gi.consul {
		if !validServiceName(c) {
			return nil, gi.w.errorf("Consul service name %q is not a valid DNS name on the overlay network", c)
		}
	}
	return gi, nil
}

var serviceNameRE = regexp.MustCompile(`^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9])*$`)

func validServiceName(s string) bool { return len(s) <= 63 && serviceNameRE.MatchString(s) }

// groupPorts numbers a group's port labels (see the package comment).
func groupPorts(w where, g *api.TaskGroup) (map[string]int, error) {
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
		return nil, w.errorf("network mode %q is not supported (host and bridge become the job's overlay network)", n.Mode)
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

// mainTask picks the group's one long-running task; hooks and sidecars are refused.
func mainTask(w where, g *api.TaskGroup) (*api.Task, error) {
	var main []*api.Task
	for _, task := range g.Tasks {
		if task.Lifecycle != nil {
			kind := task.Lifecycle.Hook
			if task.Lifecycle.Sidecar {
				kind += " sidecar"
			}
			return nil, w.errorf("task %s: lifecycle %s is not supported (a Swarm service runs one container per task)", task.Name, kind)
		}
		main = append(main, task)
	}
	switch len(main) {
	case 0:
		return nil, w.errorf("the group has no task")
	case 1:
		return main[0], nil
	}
	names := make([]string, len(main))
	for i, task := range main {
		names[i] = task.Name
	}
	return nil, w.errorf("more than one main task (%s) is not supported: a Swarm service runs one container per task", strings.Join(names, ", "))
}

// entry publishes the measured service's port on the node, in host mode.
func (t *translator) entry() error {
	name, ok := t.job.Meta[metaEntry]
	if !ok || name == "" {
		return nil
	}
	gi, ok := t.byName[name]
	if !ok {
		return where{job: t.name}.errorf("meta %s names service %q, which no group registers", metaEntry, name)
	}
	port := t.portsOf[name]
	if port == 0 {
		return gi.w.errorf("service %s (meta %s) has no port to publish", name, metaEntry)
	}
	svc := t.plan.Service(gi.name)
	t.plan.Entry = &Entry{Service: gi.name, Port: port}
	svc.Spec.EndpointSpec.Ports = []swarm.PortConfig{{
		Protocol: network.TCP, TargetPort: uint32(port), PublishedPort: 0, PublishMode: swarm.PortConfigPublishModeHost,
	}}
	return nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
