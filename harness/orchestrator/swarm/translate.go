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
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/api/types/swarm"
)

// Labels set on every service, container and volume the adapter creates.
const (
	LabelJob     = "orchbench.job"
	LabelGroup   = "orchbench.group"
	LabelTask    = "orchbench.task"
	LabelVersion = "orchbench.version"
	LabelService = "orchbench.service"
)

// The meta keys in which packs state their resource intent (as the Nomad adapter reads them).
const (
	metaCores   = "orchbench_cores"
	metaMemory  = "orchbench_memory_mib"
	metaCPUMode = "orchbench_cpu_mode"
	metaEntry   = "orchbench_service"
)

// CheckerPath is where every orchbench image carries the health-check
// binary (harness/cmd/orchbench-check, added by cluster/images.sh).
const CheckerPath = "/orchbench-check"

// AllocDataDir is the group data directory Nomad gives every allocation;
// on Swarm it is a named volume per service and slot.
const AllocDataDir = "/alloc/data"

// firstDynamicPort is where container ports of labels without `to` or `static` start.
const firstDynamicPort = 8000

// translatorRevision is part of the version label: a change to the
// translation rules re-creates services that an older rule made.
const translatorRevision = "2"

// Options tune a translation.
type Options struct {
	// MHzPerCore turns resources.cpu into cores for tasks without
	// orchbench_cores meta whose docker config has cpu_hard_limit = true.
	MHzPerCore float64
}

// Plan is the Swarm form of one Nomad job.
type Plan struct {
	Job string
	// Version is a hash of the job spec, the translation options and the
	// translator's revision; it is the orchbench.version label.
	Version string
	// Network is the job's overlay network, which every service attaches to.
	Network string
	// Entry is the measured service (job meta orchbench_service), published
	// on the node; nil when the job names none.
	Entry    *Entry
	Services []*Service
	// Remarks are the stanzas the translation ignores, and the ones it
	// honours differently from Nomad, so a report can show them.
	Remarks []Remark
}

// Entry is the measured service and the container port it publishes.
type Entry struct {
	Service string // the Swarm service name (also its Consul name)
	Port    int    // the container port; the host port is Swarm's choice per task
}

// Service is one task group as a Swarm service.
type Service struct {
	Name  string // Swarm service name: the group's Consul service name when it has exactly one
	Group string
	Task  string
	// Consul lists the Consul service names the group registers; the ones
	// other than Name are network aliases of the service.
	Consul   []string
	Replicas int
	// Ports maps each port label of the group to its container port.
	Ports map[string]int
	// Port is the container port of the group's Consul service (its port
	// label's), 0 when it registers none.
	Port     int
	Declared Declaration
	// Volume is the name template of the service's data volume mounted at
	// /alloc/data ("" when the task does not use the alloc dir); Swarm
	// expands {{.Task.Slot}}, so each replica has its own.
	Volume string
	Spec   swarm.ServiceSpec
}

// Declaration is what a pack intends to be enforced on a task.
type Declaration struct {
	Cores     float64 // 0: no CPU limit
	MemoryMiB int     // 0: no memory limit
	CPUMode   string  // "quota" or "shares"
}

// Remark is a stanza the translation ignored or honours differently.
type Remark struct {
	Where  string // "job J", "job J, group G" or "job J, group G, task T"
	Stanza string
	Kind   string // RemarkIgnored or RemarkDiffers
	Why    string
}

// Kinds of remarks.
const (
	RemarkIgnored = "ignored"
	RemarkDiffers = "differs"
)

func (r Remark) String() string {
	return fmt.Sprintf("%s: %s %s: %s", r.Where, r.Stanza, r.Kind, r.Why)
}

// Service returns the plan's service of that name, or nil.
func (p *Plan) Service(name string) *Service {
	for _, s := range p.Services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

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
	gi.name = t.name + "-" + gi.w.group
	if len(gi.consul) == 1 {
		gi.name = gi.consul[0]
	}
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

// translateGroup builds the service spec of one group.
func (t *translator) translateGroup(gi *groupInfo) (*Service, error) {
	g := gi.g
	task, err := mainTask(gi.w, g)
	if err != nil {
		return nil, err
	}
	w := where{job: t.name, group: gi.w.group, task: task.Name}
	if task.Driver != "docker" {
		return nil, w.errorf("driver %q is not supported (only docker tasks become Swarm services)", task.Driver)
	}
	if err := t.groupStanzas(gi.w, g); err != nil {
		return nil, err
	}
	if err := t.taskStanzas(w, task); err != nil {
		return nil, err
	}
	count := 1
	if g.Count != nil {
		count = *g.Count
	}
	if count < 0 {
		return nil, gi.w.errorf("count %d is negative", count)
	}
	svc := &Service{Name: gi.name, Group: gi.w.group, Task: task.Name, Consul: gi.consul, Replicas: count, Ports: gi.ports}
	if len(gi.consul) > 0 {
		svc.Port = gi.ports[gi.consulPort[gi.consul[0]]]
	}
	ic := &interpContext{w: w, ports: gi.ports, job: t.name, group: gi.w.group, task: task.Name, meta: mergedMeta(t.job, g, task), env: task.Env}
	cs, err := t.containerSpec(w, task, ic)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{LabelJob: t.name, LabelGroup: gi.w.group, LabelTask: task.Name, LabelVersion: t.plan.Version, LabelService: gi.name}
	cs.Labels = labels

	// env: the task's env block, then what env templates render
	env := map[string]string{}
	for k, v := range task.Env {
		if !validEnvKey(k) {
			return nil, w.errorf("env %q is not a valid variable name", k)
		}
		s, err := ic.interpolate(v, "env "+k, true)
		if err != nil {
			return nil, err
		}
		env[k] = s
	}
	for i, tmpl := range task.Templates {
		kv, err := t.envTemplate(w, i, tmpl)
		if err != nil {
			return nil, err
		}
		for k, v := range kv {
			env[k] = escapeTemplate(v)
		}
	}
	for _, k := range sortedKeys(env) {
		cs.Env = append(cs.Env, k+"="+env[k])
	}

	// the alloc data dir becomes a volume per service and slot
	if ic.usesAllocDir {
		svc.Volume = gi.name + "-data-{{.Task.Slot}}"
		cs.Mounts = append(cs.Mounts, mount.Mount{
			Type: mount.TypeVolume, Source: svc.Volume, Target: AllocDataDir,
			VolumeOptions: &mount.VolumeOptions{Labels: map[string]string{LabelJob: t.name, LabelGroup: gi.w.group, LabelService: gi.name}},
		})
		t.remark(gi.w, "ephemeral_disk", RemarkDiffers, fmt.Sprintf("%s is the named volume %s (one per replica slot), which survives a container restart and a task replaced on the same node; Nomad starts a new allocation empty. Stop removes it. Its size is not capped", AllocDataDir, svc.Volume))
	} else if g.EphemeralDisk != nil && g.EphemeralDisk.SizeMB != nil {
		t.remark(gi.w, "ephemeral_disk", RemarkIgnored, "no task uses the alloc dir, so no volume is made")
	}

	decl, res, err := t.resources(w, g, task)
	if err != nil {
		return nil, err
	}
	svc.Declared = decl

	hc, err := t.healthCheck(gi, w, g, task)
	if err != nil {
		return nil, err
	}
	cs.Healthcheck = hc

	placement, err := t.placement(gi.w, w, g, task)
	if err != nil {
		return nil, err
	}
	restart, err := t.restartPolicy(w, g, task)
	if err != nil {
		return nil, err
	}
	replicas := uint64(count)
	var aliases []string
	for _, c := range gi.consul {
		if c != gi.name {
			aliases = append(aliases, c)
		}
	}
	svc.Spec = swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: gi.name, Labels: copyMap(labels)},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: cs,
			Resources:     res,
			RestartPolicy: restart,
			Placement:     placement,
			Networks:      []swarm.NetworkAttachmentConfig{{Target: t.plan.Network, Aliases: aliases}},
		},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
		UpdateConfig: t.updateConfig(gi.w, g),
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}
	return svc, nil
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

// groupStanzas checks a group's other stanzas.
func (t *translator) groupStanzas(w where, g *api.TaskGroup) error {
	switch {
	case len(g.Volumes) > 0:
		return w.errorf("volume is not supported")
	case g.Consul != nil && (g.Consul.Namespace != "" || g.Consul.Cluster != ""):
		return w.errorf("consul is not supported")
	}
	if d := g.EphemeralDisk; d != nil {
		if d.Sticky != nil && *d.Sticky {
			return w.errorf("ephemeral_disk with sticky = true is not supported")
		}
		if d.Migrate != nil && *d.Migrate {
			return w.errorf("ephemeral_disk with migrate = true is not supported")
		}
	}
	if g.ReschedulePolicy != nil || g.Migrate != nil {
		t.remark(w, "reschedule/migrate", RemarkIgnored, "Swarm replaces a failed task as a new container under the restart policy (from restart), on any node")
	}
	if len(g.Meta) > 0 {
		t.remark(w, "meta", RemarkIgnored, "read for the resource intent, not passed to containers")
	}
	if g.ShutdownDelay != nil || g.Disconnect != nil || g.Scaling != nil || g.StopAfterClientDisconnect != nil || g.MaxClientDisconnect != nil {
		t.remark(w, "shutdown_delay/disconnect/scaling", RemarkIgnored, "no Swarm counterpart; no Consul deregistration to wait for")
	}
	if len(g.Affinities) > 0 {
		t.remark(w, "affinity", RemarkIgnored, "soft placement preferences; Swarm places by its own spread")
	}
	if len(g.Spreads) > 0 {
		if err := t.spreads(w, g.Spreads); err != nil {
			return err
		}
	}
	for _, s := range g.Services {
		if err := t.serviceStanza(w, s); err != nil {
			return err
		}
	}
	return nil
}

// serviceStanza refuses what a Consul service needs that Swarm DNS cannot give.
func (t *translator) serviceStanza(w where, s *api.Service) error {
	switch {
	case s.Connect != nil:
		return w.errorf("service %s: connect is not supported", s.Name)
	case s.Address != "":
		return w.errorf("service %s: address is not supported", s.Name)
	case s.Kind != "":
		return w.errorf("service %s: kind %q is not supported", s.Name, s.Kind)
	}
	if len(s.Tags) > 0 || len(s.CanaryTags) > 0 || len(s.Meta) > 0 || len(s.CanaryMeta) > 0 || len(s.TaggedAddresses) > 0 {
		t.remark(w, "service "+s.Name+" tags/meta", RemarkIgnored, "Swarm DNS has no tags or metadata; nothing in orchbench selects by them")
	}
	return nil
}

// taskStanzas refuses the task stanzas that need Nomad's client.
func (t *translator) taskStanzas(w where, task *api.Task) error {
	switch {
	case len(task.Artifacts) > 0:
		return w.errorf("artifact is not supported")
	case task.Vault != nil:
		return w.errorf("vault is not supported")
	case len(task.VolumeMounts) > 0:
		return w.errorf("volume_mount is not supported")
	case task.CSIPluginConfig != nil:
		return w.errorf("csi_plugin is not supported")
	case task.DispatchPayload != nil:
		return w.errorf("dispatch_payload is not supported")
	case task.Schedule != nil:
		return w.errorf("schedule is not supported")
	case task.Kind != "":
		return w.errorf("kind %q is not supported", task.Kind)
	case task.Consul != nil && (task.Consul.Namespace != "" || task.Consul.Cluster != ""):
		return w.errorf("consul is not supported")
	}
	if r := task.Resources; r != nil {
		switch {
		case len(r.Devices) > 0:
			return w.errorf("resources.device is not supported")
		case r.NUMA != nil:
			return w.errorf("resources.numa is not supported")
		case len(r.Networks) > 0:
			return w.errorf("a task-level network is not supported (declare it in the group)")
		}
	}
	for _, s := range task.Services {
		if err := t.serviceStanza(w, s); err != nil {
			return err
		}
	}
	if task.LogConfig != nil {
		t.remark(w, "logs", RemarkIgnored, "containers log through the daemon's default log driver")
	}
	if task.ShutdownDelay > 0 {
		t.remark(w, "shutdown_delay", RemarkIgnored, "no Consul deregistration to wait for")
	}
	if len(task.Meta) > 0 {
		t.remark(w, "meta", RemarkIgnored, "read for the resource intent, not passed to the container")
	}
	if task.Identity != nil || len(task.Identities) > 0 || len(task.Actions) > 0 || len(task.ScalingPolicies) > 0 {
		t.remark(w, "identity/action/scaling", RemarkIgnored, "no Swarm counterpart")
	}
	return nil
}

// containerSpec maps the docker driver's config.
func (t *translator) containerSpec(w where, task *api.Task, ic *interpContext) (*swarm.ContainerSpec, error) {
	cs := &swarm.ContainerSpec{User: task.User}
	// keys in sorted order: "args" comes before "command", which is put in front of them
	for _, k := range sortedKeys(task.Config) {
		v := task.Config[k]
		switch k {
		case "image":
			s, ok := v.(string)
			if !ok || s == "" {
				return nil, w.errorf("config.image must be a non-empty string")
			}
			if strings.Contains(s, "${") {
				return nil, w.errorf("config.image %q: interpolation in the image is not supported", s)
			}
			cs.Image = s
		case "args":
			args, err := stringList(w, "config.args", v)
			if err != nil {
				return nil, err
			}
			for _, a := range args {
				s, err := ic.interpolate(a, "config.args", false)
				if err != nil {
					return nil, err
				}
				cs.Args = append(cs.Args, s)
			}
		case "command":
			s, ok := v.(string)
			if !ok {
				return nil, w.errorf("config.command must be a string")
			}
			s, err := ic.interpolate(s, "config.command", false)
			if err != nil {
				return nil, err
			}
			// Nomad makes command the image's CMD with args after it, keeping
			// the entrypoint; Swarm's Args are that CMD.
			cs.Args = append([]string{s}, cs.Args...)
		case "entrypoint":
			ep, err := stringList(w, "config.entrypoint", v)
			if err != nil {
				return nil, err
			}
			for _, e := range ep {
				s, err := ic.interpolate(e, "config.entrypoint", false)
				if err != nil {
					return nil, err
				}
				cs.Command = append(cs.Command, s)
			}
		case "work_dir":
			s, ok := v.(string)
			if !ok {
				return nil, w.errorf("config.work_dir must be a string")
			}
			cs.Dir = s
		case "network_mode":
			s, _ := v.(string)
			switch s {
			case "", "host", "bridge":
				t.remark(w, "config.network_mode", RemarkDiffers, fmt.Sprintf("%q becomes the job's overlay network: the task has its own address there, and listens on the group's container ports", s))
			default:
				return nil, w.errorf("config.network_mode %q is not supported", s)
			}
		case "ports":
			labels, err := stringList(w, "config.ports", v)
			if err != nil {
				return nil, err
			}
			for _, l := range labels {
				if _, ok := ic.ports[l]; !ok {
					return nil, w.errorf("config.ports names %q, which is not a port label of the group", l)
				}
			}
		case "cpu_hard_limit":
			if _, ok := v.(bool); !ok {
				return nil, w.errorf("config.cpu_hard_limit must be a boolean")
			}
		case "force_pull", "auth_soft_fail", "image_pull_timeout":
			t.remark(w, "config."+k, RemarkIgnored, "images are local to the node; Swarm pulls only when the image is missing")
		default:
			return nil, w.errorf("config.%s is not supported", k)
		}
	}
	if cs.Image == "" {
		return nil, w.errorf("config.image is missing")
	}
	if task.KillTimeout != nil && *task.KillTimeout > 0 {
		d := *task.KillTimeout
		cs.StopGracePeriod = &d
	}
	if task.KillSignal != "" {
		cs.StopSignal = task.KillSignal
	}
	return cs, nil
}

// updateConfig keeps the group's parallelism; Nomad's health deadlines are
// remarked, not translated. A task that fails during an update does not
// pause it (Swarm's default): the update goes on, and the harness's
// WaitHealthy judges the failures, as it would a fault injected right
// after the update.
func (t *translator) updateConfig(w where, g *api.TaskGroup) *swarm.UpdateConfig {
	uc := &swarm.UpdateConfig{Parallelism: 1, Order: swarm.UpdateOrderStopFirst, FailureAction: swarm.UpdateFailureActionContinue}
	if u := g.Update; u != nil {
		if u.MaxParallel != nil && *u.MaxParallel >= 0 {
			uc.Parallelism = uint64(*u.MaxParallel)
		}
		if u.MinHealthyTime != nil || u.HealthyDeadline != nil || u.ProgressDeadline != nil || u.AutoRevert != nil || u.Canary != nil || u.HealthCheck != nil {
			t.remark(w, "update", RemarkIgnored, "only max_parallel becomes Swarm's update parallelism; the harness waits for health itself")
		}
	}
	return uc
}

// restartPolicy maps Nomad's restart stanza: attempts within interval, delay
// between them, and mode fail as Swarm giving up on the slot. Swarm restarts
// a task by replacing its container, so this also stands for reschedule.
func (t *translator) restartPolicy(w where, g *api.TaskGroup, task *api.Task) (*swarm.RestartPolicy, error) {
	rp := task.RestartPolicy
	if rp == nil {
		rp = g.RestartPolicy
	}
	if rp == nil {
		return nil, nil
	}
	out := &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionAny}
	if rp.Delay != nil {
		d := *rp.Delay
		out.Delay = &d
	}
	mode := deref(rp.Mode)
	switch mode {
	case "", "fail":
		if rp.Attempts != nil {
			if *rp.Attempts == 0 {
				out.Condition = swarm.RestartPolicyConditionNone
				break
			}
			n := uint64(*rp.Attempts)
			out.MaxAttempts = &n
		}
		if rp.Interval != nil {
			d := *rp.Interval
			out.Window = &d
		}
	case "delay":
		// Nomad waits out the interval and goes on restarting: unlimited attempts
	default:
		return nil, w.errorf("restart mode %q is not supported", mode)
	}
	if rp.RenderTemplates != nil && *rp.RenderTemplates {
		t.remark(w, "restart.render_templates", RemarkIgnored, "templates are rendered once, at translation")
	}
	return out, nil
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

// RemarkSummary groups the remarks that say the same about several places,
// one line each: "<stanza> <kind> (<where>): <why>", where lists the groups
// (or tasks) of one job compactly.
func (p *Plan) RemarkSummary() []string {
	type key struct{ stanza, kind, why string }
	var order []key
	places := map[key][]string{}
	for _, r := range p.Remarks {
		stanza := r.Stanza
		if strings.HasPrefix(stanza, "service ") && strings.HasSuffix(stanza, " tags/meta") {
			stanza = "service tags/meta"
		}
		k := key{stanza, r.Kind, r.Why}
		if _, ok := places[k]; !ok {
			order = append(order, k)
		}
		places[k] = append(places[k], r.Where)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, fmt.Sprintf("%s %s (%s): %s", k.stanza, k.kind, compactWhere(p.Job, places[k]), k.why))
	}
	return out
}

// compactWhere turns "job J, group G[, task T]" places into "job J, groups G1, G2".
func compactWhere(job string, places []string) string {
	if len(places) == 1 {
		return places[0]
	}
	prefix := "job " + job + ", group "
	var groups []string
	for _, w := range places {
		g, ok := strings.CutPrefix(w, prefix)
		if !ok {
			return strings.Join(places, "; ")
		}
		g, _, _ = strings.Cut(g, ",")
		groups = append(groups, g)
	}
	return fmt.Sprintf("job %s, %d groups: %s", job, len(groups), strings.Join(groups, ", "))
}
