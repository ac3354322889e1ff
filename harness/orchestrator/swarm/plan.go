package swarm

import (
	"fmt"
	"github.com/orchbench/orchbench/harness/contract"
	"strings"

	"github.com/moby/moby/api/types/swarm"
)

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
	// Check is the health check the adapter runs; nil when the group has none.
	Check *Check
	// Volume is the name template of the service's data volume mounted at
	// /alloc/data ("" when the task does not use the alloc dir); Swarm
	// expands {{.Task.Slot}}, so each replica has its own.
	Volume string
	Spec   swarm.ServiceSpec
}

// Declaration is what a pack intends to be enforced on a task, read by the
// one contract parser every adapter and the limits gate use.
type Declaration = contract.Task

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

// Service returns the plan's service of that Swarm or Consul name, or nil.
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
