package swarm

import (
	"fmt"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/swarm"
)

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

	check, err := t.healthCheck(gi, w, g, task)
	if err != nil {
		return nil, err
	}
	svc.Check = check
	cs.Healthcheck = noHealthcheck

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
