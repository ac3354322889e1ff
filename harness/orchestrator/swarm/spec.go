package swarm

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/api/types/swarm"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	"github.com/orchbench/orchbench/harness/placement"
)

// slot is Swarm's template for a task's slot, which it expands in env,
// hostname and mounts only.
const slot = "{{.Task.Slot}}"

// noHealthcheck turns off any health check the image declares: the adapter
// runs the group's check itself, from outside the container (see
// translate.Check), and Swarm would replace a container whose own check
// timed out under load.
var noHealthcheck = &container.HealthConfig{Test: []string{"NONE"}}

// serviceSpec builds the Swarm service of one translated service.
func (p *Plan) serviceSpec(svc *translate.Service) (swarm.ServiceSpec, error) {
	labels := map[string]string{LabelJob: p.Job, LabelGroup: svc.Group, LabelTask: svc.Task, LabelVersion: p.Version, LabelService: svc.Name}
	res, err := resources(p.Job, svc)
	if err != nil {
		return swarm.ServiceSpec{}, err
	}
	replicas := uint64(svc.Replicas)
	var aliases []string
	for _, c := range svc.Consul {
		if c != svc.Name {
			aliases = append(aliases, c)
		}
	}
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: svc.Name, Labels: copyMap(labels)},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: p.containerSpec(svc, labels),
			Resources:     res,
			RestartPolicy: restartPolicy(svc.Restart),
			Placement:     swarmPlacement(svc.Placement),
			Networks:      []swarm.NetworkAttachmentConfig{{Target: p.Network, Aliases: aliases}},
		},
		Mode: swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
		// A task that fails during an update does not pause it (Swarm's
		// default): the update goes on, and the harness's WaitHealthy judges
		// the failures, as it would a fault injected right after the update.
		UpdateConfig: &swarm.UpdateConfig{Parallelism: svc.UpdateParallelism, Order: swarm.UpdateOrderStopFirst, FailureAction: swarm.UpdateFailureActionContinue},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}
	// The measured service's port is published on the node in host mode,
	// port 0: Docker picks a free host port per task, so replicas share a node.
	if p.Entry != nil && p.Entry.Service == svc.Name {
		spec.EndpointSpec.Ports = []swarm.PortConfig{{
			Protocol: network.TCP, TargetPort: uint32(p.Entry.Port), PublishedPort: 0, PublishMode: swarm.PortConfigPublishModeHost,
		}}
	}
	return spec, nil
}

func (p *Plan) containerSpec(svc *translate.Service, labels map[string]string) *swarm.ContainerSpec {
	c := svc.Container
	cs := &swarm.ContainerSpec{
		Image: c.Image, Labels: labels, Command: c.Entrypoint, Args: c.Args, Dir: c.WorkDir, User: c.User,
		StopGracePeriod: c.StopGrace, StopSignal: c.StopSignal, Healthcheck: noHealthcheck,
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		cs.Env = append(cs.Env, k+"="+translate.ExpandIndex(c.Env[k], escapeTemplate, slot))
	}
	if svc.UsesAllocDir {
		cs.Mounts = append(cs.Mounts, mount.Mount{
			Type: mount.TypeVolume, Source: volumeName(svc), Target: AllocDataDir,
			VolumeOptions: &mount.VolumeOptions{Labels: map[string]string{LabelJob: p.Job, LabelGroup: svc.Group, LabelService: svc.Name}},
		})
	}
	return cs
}

// volumeName is the service's data volume; Swarm expands the slot, so each
// replica has its own.
// volumeName is per service definition and slot: a changed definition
// starts on an empty volume, as Nomad starts a changed group's new
// allocation with an empty data dir; the old one goes with Stop.
func volumeName(svc *translate.Service) string {
	return svc.Name + "-data-" + svc.Version() + "-" + slot
}

// escapeTemplate keeps Swarm's template expansion from reading literal text.
func escapeTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}

// resources makes limits and reservations both the declaration, so the
// kernel enforces exactly what the pack intends and Swarm places a task
// only where the declaration fits. No cores, no CPU limit; no memory, no
// memory limit.
func resources(job string, svc *translate.Service) (*swarm.ResourceRequirements, error) {
	d := svc.Declared
	nano := int64(math.Round(d.Cores * 1e9))
	mem := int64(d.MemoryMiB) << 20
	where := fmt.Sprintf("swarm: job %s, group %s, task %s", job, svc.Group, svc.Task)
	if d.Cores > 0 && nano < 1e6 {
		return nil, fmt.Errorf("%s: %g cores is below Docker's minimum CPU quota (0.001 cores)", where, d.Cores)
	}
	if mem > 0 && mem < 6<<20 {
		return nil, fmt.Errorf("%s: %d MiB is below Docker's minimum memory limit (6 MiB)", where, d.MemoryMiB)
	}
	rr := &swarm.ResourceRequirements{}
	if nano > 0 || mem > 0 {
		rr.Limits = &swarm.Limit{NanoCPUs: nano, MemoryBytes: mem}
		rr.Reservations = &swarm.Resources{NanoCPUs: nano, MemoryBytes: mem}
	}
	return rr, nil
}

// restartPolicy: Swarm restarts a task by replacing its container, so the
// policy also stands for Nomad's reschedule; condition none gives up on the slot.
func restartPolicy(r *translate.Restart) *swarm.RestartPolicy {
	if r == nil {
		return nil
	}
	cond := swarm.RestartPolicyConditionAny
	if r.Condition == translate.RestartNone {
		cond = swarm.RestartPolicyConditionNone
	}
	return &swarm.RestartPolicy{Condition: cond, MaxAttempts: r.MaxAttempts, Window: r.Window, Delay: r.Delay}
}

// swarmPlacement: a node label that must not have a value is a constraint on
// node.labels, which a node without the label passes, as in Nomad.
func swarmPlacement(pl translate.Placement) *swarm.Placement {
	if pl.IsZero() {
		return nil
	}
	out := &swarm.Placement{MaxReplicas: pl.MaxPerNode}
	for _, l := range pl.NotOn {
		out.Constraints = append(out.Constraints, placement.SwarmNotOn(l.Key, l.Value))
	}
	return out
}

// describe renders a declaration for messages.
func describe(d Declaration) string {
	cpu := "no CPU limit"
	if d.Cores > 0 {
		cpu = fmt.Sprintf("%g cores (%s)", d.Cores, d.CPUMode)
	}
	mem := "no memory limit"
	if d.MemoryMiB > 0 {
		mem = fmt.Sprintf("%d MiB", d.MemoryMiB)
	}
	return cpu + ", " + mem
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
