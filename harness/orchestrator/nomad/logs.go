package nomad

import "github.com/orchbench/orchbench/harness/orchestrator"

// The node agent (NodeAgent) ships the task logs of Nomad's allocations,
// labelled nomad.job with the job's ID.
var _ orchestrator.ShippedLogs = (*Orchestrator)(nil)

// ShippedLogJob is the nomad.job label of the deployment's shipped logs.
func (a *Orchestrator) ShippedLogJob(d *orchestrator.Deployment) string { return d.Job }
