package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
)

// Plan is the neutral form of one Nomad job.
type Plan struct {
	Job string
	// Version is a hash of the job spec, the target, the options and the
	// translator's revision; adapters label what they create with it, so a
	// new rule re-creates what an older rule made.
	Version string
	// Entry is the measured service (job meta orchbench_service), which the
	// adapter publishes on the node; nil when the job names none.
	Entry    *Entry
	Services []*Service
	// Remarks are the stanzas the translation ignores, and the ones it
	// honours differently from Nomad, so a report can show them.
	Remarks []Remark
}

// Entry is the measured service and the container port it publishes.
type Entry struct {
	Service string // the service's name (Service.Name)
	Port    int    // the container port; the host port is the orchestrator's choice
}

// Service is one task group: one container per replica.
type Service struct {
	Name  string // <job>-<group>, a DNS-1035 label
	Group string
	Task  string
	// Consul lists the Consul service names the group registers, in stanza
	// order; the job's tasks look their upstreams up by these.
	Consul   []string
	Replicas int
	// Ports maps each port label of the group to its container port.
	Ports map[string]int
	// Port is the container port of the group's first Consul service (its
	// port label's), 0 when it registers none.
	Port int
	// Declared is the task's intent; a shares-mode task has no cap (Cores
	// 0) and weighs Declared.WeightCores against the others.
	Declared contract.Task
	// Check is the health check the adapter runs; nil when the group has none.
	Check *Check
	// UsesAllocDir: the task reads or writes AllocDataDir, so the adapter
	// gives each replica a data volume of its own mounted there.
	UsesAllocDir bool
	Container    Container
	// Restart is nil when neither the task nor the group has a restart stanza.
	Restart   *Restart
	Placement Placement
	// UpdateParallelism is how many replicas an update replaces at once.
	UpdateParallelism uint64
	// Autoscale is the group's scaling policy, which the adapter runs with
	// its orchestrator's autoscaler; nil when the group has none.
	Autoscale *contract.Autoscale `json:",omitempty"`
}

// Version hashes what decides the service's instances, replicas and update
// pace aside: scaling adds or removes instances without replacing them, and
// a change elsewhere in the job leaves them (and a store's data) alone, as
// Nomad updates only the groups that changed.
func (s *Service) Version() string {
	c := *s
	c.Replicas, c.UpdateParallelism = 0, 0
	b, err := json.Marshal(&c)
	if err != nil {
		// every field is plain data; a failure is a programming error
		panic("translate: hash service " + s.Name + ": " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Container is the docker task's config.
type Container struct {
	Image string
	// Entrypoint is config.entrypoint, replacing the image's.
	Entrypoint []string
	// Args is config.command followed by config.args: the image's CMD, as
	// Nomad passes it to docker (the entrypoint is kept).
	Args []string
	// Env holds the literal values, interpolated and with env templates
	// rendered; the adapter escapes them for its own expansion syntax and
	// puts the instance index where AllocIndex stands (ExpandIndex).
	Env     map[string]string
	WorkDir string
	User    string
	// StopGrace is kill_timeout: how long a stop waits before killing; nil
	// for the orchestrator's default.
	StopGrace  *time.Duration
	StopSignal string
}

// Restart is Nomad's restart stanza: at most MaxAttempts restarts within
// Window, Delay apart; condition none when attempts is 0.
type Restart struct {
	Condition   string         // RestartAny or RestartNone
	MaxAttempts *uint64        // nil: unlimited
	Window      *time.Duration // nil: the attempts count over the task's life
	Delay       *time.Duration
}

// Restart conditions.
const (
	RestartAny  = "any"
	RestartNone = "none"
)

// Placement is where replicas may run; the zero value lets the orchestrator
// place them anywhere.
type Placement struct {
	// MaxPerNode limits the replicas on one node (distinct_hosts: 1); 0 for no limit.
	MaxPerNode uint64
	// NotOn are node labels (Nomad's node meta, Swarm's and Kubernetes'
	// node labels of the same key) a replica's node must not carry with
	// that value; a node without the label passes, as in Nomad.
	NotOn []NodeLabel
}

// NodeLabel is one key and value of a node's labels.
type NodeLabel struct {
	Key, Value string
}

// IsZero says the orchestrator may place the replicas anywhere.
func (p Placement) IsZero() bool { return p.MaxPerNode == 0 && len(p.NotOn) == 0 }

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

// AddRemark adds an adapter's own remark about a service's group (the job's
// when svc is nil), so facts of one orchestrator are said where the
// translation's are.
func (p *Plan) AddRemark(svc *Service, stanza, kind, why string) {
	w := where{job: p.Job}
	if svc != nil {
		w.group = svc.Group
	}
	p.Remarks = append(p.Remarks, Remark{Where: w.String(), Stanza: stanza, Kind: kind, Why: why})
}

// Service returns the plan's service of that name or Consul name, or nil.
func (p *Plan) Service(name string) *Service {
	for _, s := range p.Services {
		if s.Name == name {
			return s
		}
	}
	for _, s := range p.Services {
		for _, c := range s.Consul {
			if c == name {
				return s
			}
		}
	}
	return nil
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
