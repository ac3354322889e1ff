package translate

import (
	"maps"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
)

// translateGroup reads one group into its service.
func (t *translator) translateGroup(gi *groupInfo) (*Service, error) {
	g := gi.g
	task, err := mainTask(gi.w, g)
	if err != nil {
		return nil, err
	}
	w := t.where(gi.w.group, task.Name)
	if task.Driver != "docker" {
		return nil, w.errorf("driver %q is not supported (only docker tasks become %s services)", task.Driver, t.target)
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
	ic := &interpContext{w: w, target: t.target, ports: gi.ports, job: t.name, group: gi.w.group, task: task.Name, meta: mergedMeta(t.job, g, task), env: task.Env}
	env, err := t.env(w, task, ic)
	if err != nil {
		return nil, err
	}
	// Nomad interpolates the config with what env templates rendered too
	// (an entry's backends in its args), so the config sees them here; the
	// env block's own values stay as written, interpolated where used.
	ic.env = maps.Clone(env)
	maps.Copy(ic.env, task.Env)
	if svc.Container, err = t.container(w, task, ic); err != nil {
		return nil, err
	}
	svc.Container.Env = env
	svc.UsesAllocDir = ic.usesAllocDir
	if !svc.UsesAllocDir && g.EphemeralDisk != nil && g.EphemeralDisk.SizeMB != nil {
		t.remark(gi.w, "ephemeral_disk", RemarkIgnored, "no task uses the alloc dir, so no volume is made")
	}
	if svc.Declared, err = t.resources(w, g, task); err != nil {
		return nil, err
	}
	if svc.Check, err = t.healthCheck(gi, w, g, task); err != nil {
		return nil, err
	}
	if svc.Placement, err = t.placement(gi.w, w, g, task); err != nil {
		return nil, err
	}
	if svc.Restart, err = t.restart(w, g, task); err != nil {
		return nil, err
	}
	svc.UpdateParallelism = t.updateParallelism(gi.w, g)
	if svc.Autoscale, err = contract.ParseGroupAutoscale(t.name, g); err != nil {
		return nil, gi.w.errorf("%v", err)
	}
	if svc.Autoscale != nil {
		t.remark(gi.w, "scaling", RemarkDiffers, "the policy runs with "+t.opts.Target.autoscaler()+"; its metric is the group's CPU share as "+t.target+" measures it, not the policy's query")
	}
	return svc, nil
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
			return nil, w.errorf("task %s: lifecycle %s is not supported (a group runs one container per replica)", task.Name, kind)
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
	return nil, w.errorf("more than one main task (%s) is not supported: a group runs one container per replica", strings.Join(names, ", "))
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
		t.remark(w, "reschedule/migrate", RemarkIgnored, t.opts.Target.reschedule())
	}
	if len(g.Meta) > 0 {
		t.remark(w, "meta", RemarkIgnored, "read for the resource intent, not passed to containers")
	}
	if g.ShutdownDelay != nil || g.Disconnect != nil || g.StopAfterClientDisconnect != nil || g.MaxClientDisconnect != nil {
		t.remark(w, "shutdown_delay/disconnect", RemarkIgnored, "no "+t.target+" counterpart; no Consul deregistration to wait for")
	}
	if len(g.Affinities) > 0 {
		t.remark(w, "affinity", RemarkIgnored, "soft placement preferences; "+t.target+" places by its own spread")
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

// serviceStanza refuses what a Consul service needs that plain DNS cannot give.
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
		t.remark(w, "service "+s.Name+" tags/meta", RemarkIgnored, t.target+" DNS has no tags or metadata; nothing in orchbench selects by them")
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
		t.remark(w, "logs", RemarkIgnored, "containers log through the runtime's default log driver")
	}
	if task.ShutdownDelay > 0 {
		t.remark(w, "shutdown_delay", RemarkIgnored, "no Consul deregistration to wait for")
	}
	if len(task.Meta) > 0 {
		t.remark(w, "meta", RemarkIgnored, "read for the resource intent, not passed to the container")
	}
	if task.Identity != nil || len(task.Identities) > 0 || len(task.Actions) > 0 || len(task.ScalingPolicies) > 0 {
		t.remark(w, "identity/action/scaling", RemarkIgnored, "no "+t.target+" counterpart")
	}
	return nil
}
