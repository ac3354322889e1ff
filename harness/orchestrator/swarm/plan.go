// Package swarm runs the packs' rendered Nomad jobs on Docker Swarm. The job
// stays the single source of truth: package translate reads it by the rules
// every adapter shares (and refuses what no adapter can honour), and this
// package turns each of its services into a Swarm service spec. Stanzas
// that mean nothing on Swarm are never dropped silently: the plan lists
// each as a Remark, the translator's and the few that are Swarm's own.
//
// Networking is the adapter's: every service of a job is attached to one
// overlay network, orchbench-<job>, resolved by DNS round robin (dnsrr:
// the service name answers with every replica's address), with the group's
// Consul names as aliases there, and the job's measured service publishes
// its port on the node in host mode. Nomad's host and bridge network modes
// both become that attachment.
package swarm

import (
	"fmt"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/swarm"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// Labels set on every service, container and volume the adapter creates.
const (
	LabelJob     = "orchbench.job"
	LabelGroup   = "orchbench.group"
	LabelTask    = "orchbench.task"
	LabelVersion = "orchbench.version"
	LabelService = "orchbench.service"
)

// AllocDataDir is the group data directory Nomad gives every allocation;
// on Swarm it is a named volume per service and slot.
const AllocDataDir = translate.AllocDataDir

// Target is what the translator is told about Swarm. Swarm has no cpuset
// and no relative shares: a CPU quota of the declared cores, or no cap.
// Its Revision counts changes to how this package builds service specs.
var Target = translate.Target{
	Name:       "Swarm",
	Revision:   "1",
	CPUModes:   []contract.CPUMode{contract.CPUModeQuota, contract.CPUModeShares},
	Network:    "the job's overlay network",
	Reschedule: "Swarm replaces a failed task as a new container under the restart policy (from restart), on any node",
	Autoscaler: "orchbench's own scaler in the harness (Swarm has none)",
}

// Options tune a translation.
type Options struct {
	// MHzPerCore turns resources.cpu into cores for tasks without
	// orchbench_cores meta.
	MHzPerCore float64
}

// Declaration is what a pack intends to be enforced on a task, read by the
// one contract parser every adapter and the limits gate use.
type Declaration = contract.Task

// Plan is the Swarm form of one Nomad job: the neutral plan, its overlay
// network, and a service spec per service.
type Plan struct {
	*translate.Plan
	// Network is the job's overlay network, which every service attaches to.
	Network string
	// Specs maps each service's name to its spec; a spec's network target
	// is the network's name until Deploy knows its ID.
	Specs map[string]swarm.ServiceSpec
}

// Translate turns one Nomad job into Swarm service specs.
func Translate(job *api.Job, opts Options) (*Plan, error) {
	tp, err := translate.Translate(job, translate.Options{MHzPerCore: opts.MHzPerCore, Target: Target})
	if err != nil {
		return nil, err
	}
	p := &Plan{Plan: tp, Network: "orchbench-" + tp.Job, Specs: map[string]swarm.ServiceSpec{}}
	for _, svc := range tp.Services {
		spec, err := p.serviceSpec(svc)
		if err != nil {
			return nil, err
		}
		p.Specs[svc.Name] = spec
		p.remarks(svc)
	}
	return p, nil
}

// remarks add what Swarm itself does differently from Nomad.
func (p *Plan) remarks(svc *translate.Service) {
	if svc.UsesAllocDir {
		p.AddRemark(svc, "ephemeral_disk", translate.RemarkDiffers, fmt.Sprintf("%s is the named volume %s (one per replica slot), which survives a container restart and a task replaced on the same node; Nomad starts a new allocation empty. Stop removes it. Its size is not capped", AllocDataDir, volumeName(svc)))
	}
	if svc.Restart != nil {
		p.AddRemark(svc, "restart", translate.RemarkDiffers, "Swarm replaces the container (a new task) where Nomad restarts the task in place")
	}
	for _, v := range svc.Container.Env {
		if strings.Contains(v, translate.AllocIndex) {
			p.AddRemark(svc, "${NOMAD_ALLOC_INDEX}", translate.RemarkDiffers, "it is Swarm's task slot, which counts from 1 where Nomad's alloc index counts from 0")
			break
		}
	}
}
