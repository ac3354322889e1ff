package swarm

import (
	"context"
	"fmt"
	"math"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// Swarm's service API sets a CPU quota and a memory limit but neither a
// CPU weight nor swap: every task runs at Docker's default weight (1024,
// whatever it declares) and may swap as much again as its memory limit.
// Nomad weighs a task by its declared MHz and Kubernetes by its millicores,
// and neither lets it swap, so on a contended node Swarm's tasks would
// share CPU under another policy than the other two orchestrators' (the
// parity report flagged it on every pack). alignPolicy gives each running
// container what Kubernetes gives the same declaration, through the
// container's own engine: a weight in proportion to its declared cores and
// no swap. The limits gate and the parity rows read the result from the
// cgroups, as for the others.

// weightPerCore is the kubelet's CPU shares per declared core, and
// minWeight the least the kernel accepts.
const (
	weightPerCore = 1024
	minWeight     = 2
	maxWeight     = 262144
)

// sharesFor is the CPU weight Kubernetes gives a container declaring cores
// (its request in whole millicores, as the Kubernetes adapter rounds it);
// 0 for a task that declares none, which keeps Docker's default.
func sharesFor(cores float64) int64 {
	if cores <= 0 {
		return 0
	}
	milli := max(1, int64(math.Round(cores*1000)))
	return min(max(milli*weightPerCore/1000, minWeight), maxWeight)
}

// policyUpdate is the update a container needs to run under the aligned
// policy, and whether it needs one.
func policyUpdate(svc *translate.Service, hc *container.HostConfig) (container.Resources, bool) {
	var up container.Resources
	need := false
	if want := sharesFor(svc.Declared.WeighedCores()); want > 0 && hc.CPUShares != want {
		up.CPUShares, need = want, true
	}
	// Docker takes a swap limit only beside the memory limit it bounds
	if hc.Memory > 0 && hc.MemorySwap != hc.Memory {
		up.Memory, up.MemorySwap, need = hc.Memory, hc.Memory, true
	}
	return up, need
}

// alignPolicy updates every running task of the deployment whose container
// is not yet under the aligned policy: after a deploy, and after Swarm
// replaced a task (a fault, a restart), since WaitHealthy runs before
// every step. A container that cannot be updated is an error naming it:
// the step would compare under unequal policies.
func (a *Engine) alignPolicy(ctx context.Context, d *deployment) error {
	for _, svc := range d.Plan.Services {
		id, ok := d.ServiceIDs[svc.Name]
		if !ok {
			continue
		}
		tasks, err := a.serviceTasks(ctx, id)
		if err != nil {
			return err
		}
		for _, t := range runningTasks(tasks, d.Version) {
			res, e, err := a.inspectTask(ctx, t)
			if err != nil {
				return fmt.Errorf("swarm: job %s: service %s: align the CPU weight and swap: %w", d.Job, svc.Name, err)
			}
			hc := res.Container.HostConfig
			if hc == nil {
				continue
			}
			up, need := policyUpdate(svc, hc)
			if !need {
				continue
			}
			if _, err := e.Client.ContainerUpdate(ctx, res.Container.ID, client.ContainerUpdateOptions{Resources: &up}); err != nil {
				return fmt.Errorf("swarm: job %s: service %s: set CPU weight %d and no swap on container %s (node %s): %w",
					d.Job, svc.Name, up.CPUShares, shortID(res.Container.ID), e.Name, err)
			}
		}
	}
	return nil
}
