package conformance

import (
	"encoding/json"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/placement"
)

// checkPlacementVariable: the harness takes placement out of the variables
// before a pack renders (harness/placement), so a pack's own would never
// be set.
func checkPlacementVariable(p *pack.Pack, where string, add func(string, string, ...any)) {
	if _, ok := p.Variables[placement.Variable]; ok {
		add(where, "declares a variable %q, which the harness takes out before rendering and applies itself (harness/placement): the pack would never see it", placement.Variable)
	}
}

// checkPlacement applies every placement to the rendered jobs: each group
// stays off the client node; spread leaves at most one instance of a
// back end on a worker; and a job of several groups has a front end to
// hold on its worker, the group that registers the measured service.
func checkPlacement(s shape, add func(string, string, ...any)) {
	for _, mode := range placement.Modes {
		for i, orig := range s.jobs {
			job, err := cloneJob(orig)
			if err != nil {
				add(s.where, "job %s does not copy: %v", deref(orig.ID), err)
				return
			}
			if err := placement.Apply([]*api.Job{job}, mode); err != nil {
				add(s.where, "placement %s: %v", mode, err)
				continue
			}
			measured := s.apps[i].Measured()
			pinned := 0
			for _, g := range job.TaskGroups {
				off, front, spread := false, false, false
				for _, c := range g.Constraints {
					key, isMeta := placement.MetaKeyOf(c.LTarget)
					switch {
					case isMeta && key == placement.NodeRole && c.RTarget == "client":
						off = true
					case isMeta && key == placement.NodeFrontend:
						front = true
					case c.Operand == api.ConstraintDistinctHosts:
						spread = true
					}
				}
				if !off {
					add(s.where, "placement %s: group %s may run on the client node, beside the load generator", mode, deref(g.Name))
				}
				if front {
					pinned++
				}
				if mode == placement.Spread && !front && !spread {
					add(s.where, "placement spread: group %s may put two instances on one worker", deref(g.Name))
				}
			}
			if measured && len(job.TaskGroups) > 1 && mode != placement.Packed && pinned != 1 {
				add(s.where, "placement %s: job %s has %d groups but no group registers the measured service %q, so its front end cannot be held on one worker",
					mode, deref(job.ID), len(job.TaskGroups), s.apps[i].Service)
			}
		}
	}
}

// cloneJob is a deep copy: placement adds to the job it is given.
func cloneJob(j *api.Job) (*api.Job, error) {
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	var out api.Job
	return &out, json.Unmarshal(b, &out)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
