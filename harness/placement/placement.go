// Package placement makes where instances run part of an experiment: a
// step's placement variable (spread, packed or the scheduler's own) becomes
// constraints in the rendered Nomad job, the single source of truth every
// adapter deploys or translates. The same constraints keep the front end on
// one worker and applications off the client node, which carries the load
// generator (issue 24, item 4). Nodes tell their roles by the meta keys
// below (cluster/nodes-agents.sh sets them); a node without them, as on the
// single-node cluster, satisfies every constraint made here.
package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/names"
)

// Mode is how a service's instances spread over the workers.
type Mode string

const (
	// Scheduler leaves placement to the orchestrator's own policy.
	Scheduler Mode = "scheduler"
	// Spread puts at most one instance of a service on a worker: a
	// service with more instances than workers cannot be placed.
	Spread Mode = "spread"
	// Packed puts every instance on one worker, the front end's: the
	// fewest workers there can be, the same on every orchestrator (a soft
	// preference would be weighed differently by each scheduler). A
	// deployment that does not fit one worker stays pending and fails.
	Packed Mode = "packed"
)

// Modes lists every mode, for validation and messages.
var Modes = []Mode{Scheduler, Spread, Packed}

// Variable is the name a spec's vars (or `pack run --var`) give the mode.
// The harness takes it out before the pack renders, so every pack has it
// without declaring it.
const Variable = "placement"

// MetaKey is the job meta key the applied mode is recorded under.
const MetaKey = contract.Prefix + "placement"

// Node meta keys (Nomad client meta; Swarm node labels and Kubernetes node
// labels of the same names).
const (
	// NodeRole is server, worker or client.
	NodeRole = "orchbench.role"
	// NodeFrontend is "true" on the worker that holds the front end and
	// "false" on every other node.
	NodeFrontend = "orchbench.frontend"
	// NodeLinkDelay is the netem delay on the node's link, "0" for none.
	NodeLinkDelay = "orchbench.link_delay"
)

// Parse reads a mode; empty means Scheduler.
func Parse(s string) (Mode, error) {
	if s == "" {
		return Scheduler, nil
	}
	m := Mode(s)
	if !slices.Contains(Modes, m) {
		return "", fmt.Errorf("%s = %q: not a placement; valid: %s", Variable, s, ModeList())
	}
	return m, nil
}

// ModeList is "scheduler, spread, packed", for messages.
func ModeList() string {
	return names.Join(Modes)
}

// Take removes the placement variable from a pack's overrides and returns
// the mode it names, so the pack renders without it.
func Take(overrides map[string]string) (Mode, map[string]string, error) {
	rest := map[string]string{}
	raw := ""
	for k, v := range overrides {
		if strings.TrimSpace(k) == Variable {
			raw = strings.TrimSpace(v)
			continue
		}
		rest[k] = v
	}
	m, err := Parse(raw)
	return m, rest, err
}

// Constraint operands and targets the constraints below use; translate
// reads them back.
const (
	operandNot = "!="
	attrPrefix = "${meta."
)

// MetaAttr is the Nomad attribute of a node meta key: ${meta.KEY}.
func MetaAttr(key string) string { return attrPrefix + key + "}" }

// MetaKeyOf is the node meta key of a Nomad attribute, ok false when it is
// not ${meta.KEY}.
func MetaKeyOf(attr string) (string, bool) {
	if strings.HasPrefix(attr, attrPrefix) && strings.HasSuffix(attr, "}") {
		return attr[len(attrPrefix) : len(attr)-1], true
	}
	return "", false
}

// offClient keeps applications off the client node, which runs the load.
func offClient() *api.Constraint {
	return &api.Constraint{LTarget: MetaAttr(NodeRole), Operand: operandNot, RTarget: "client"}
}

// onFrontend holds a group to the front end's worker: every node but it
// says false (a node saying nothing, on the single-node cluster, passes).
func onFrontend() *api.Constraint {
	return &api.Constraint{LTarget: MetaAttr(NodeFrontend), Operand: operandNot, RTarget: "false"}
}

// roomForFrontend is a soft preference of the front end's companions for
// the other workers. The front end cannot move off its worker, and Nomad's
// bin packing fills the fullest node first: a social network's services
// once took all of worker 1's memory before its front end was placed, and
// the deployment stayed pending ("memory exhausted on 1 node"). A
// preference, not a constraint, so that a cluster with no room elsewhere
// still places them there. Kubernetes and Swarm spread by load already;
// their translations ignore it and say so.
func roomForFrontend() *api.Affinity {
	weight := int8(-100)
	return &api.Affinity{LTarget: MetaAttr(NodeFrontend), Operand: "=", RTarget: "true", Weight: &weight}
}

func oneSpreadPerNode() *api.Constraint {
	return &api.Constraint{Operand: api.ConstraintDistinctHosts, RTarget: "true"}
}

// LoadAvoids is the role of the nodes the load generator never runs on
// (the workers, whose CPU the measured tasks own): on the emulated cluster
// it lands on the client node; a single node carries no role and takes it
// as before. jobs/loadgen.nomad.hcl says the same in HCL.
const LoadAvoids = "worker"

// SwarmNotOn is a Swarm placement constraint: the node's label key must not
// have value (a node without the label passes).
func SwarmNotOn(key, value string) string { return "node.labels." + key + "!=" + value }

// Apply adds the mode's constraints to every group of the jobs and records
// the mode in each job's meta. The front end, the group serving the
// measured service of a job with other groups too, stays on its worker
// whatever the mode, and the job's other groups prefer the other workers
// unless packed there; a job of one group is the front end and its own back
// end, and follows the mode.
func Apply(jobs []*api.Job, mode Mode) error {
	if _, err := Parse(string(mode)); err != nil {
		return err
	}
	for _, job := range jobs {
		front := frontendGroup(job)
		for _, g := range job.TaskGroups {
			if g.Name == nil {
				return fmt.Errorf("placement: job %s has a group without a name", deref(job.ID))
			}
			g.Constraints = append(g.Constraints, offClient())
			switch {
			case *g.Name == front || mode == Packed:
				g.Constraints = append(g.Constraints, onFrontend())
			case mode == Spread:
				g.Constraints = append(g.Constraints, oneSpreadPerNode())
			}
			if front != "" && *g.Name != front && mode != Packed {
				g.Affinities = append(g.Affinities, roomForFrontend())
			}
		}
		if job.Meta == nil {
			job.Meta = map[string]string{}
		}
		job.Meta[MetaKey] = string(mode)
	}
	return nil
}

// frontendGroup is the group that serves the job's measured service, when
// the job has other groups too; "" otherwise.
func frontendGroup(job *api.Job) string {
	service := job.Meta[contract.KeyService]
	if service == "" || len(job.TaskGroups) < 2 {
		return ""
	}
	for _, g := range job.TaskGroups {
		for _, s := range g.Services {
			if s.Name == service {
				return deref(g.Name)
			}
		}
		for _, t := range g.Tasks {
			for _, s := range t.Services {
				if s.Name == service {
					return deref(g.Name)
				}
			}
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
