package translate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// container maps the docker driver's config.
func (t *translator) container(w where, task *api.Task, ic *interpContext) (Container, error) {
	c := Container{User: task.User}
	// keys in sorted order: "args" comes before "command", which is put in front of them
	for _, k := range slices.Sorted(maps.Keys(task.Config)) {
		v := task.Config[k]
		switch k {
		case "image":
			s, ok := v.(string)
			if !ok || s == "" {
				return c, w.errorf("config.image must be a non-empty string")
			}
			if strings.Contains(s, "${") {
				return c, w.errorf("config.image %q: interpolation in the image is not supported", s)
			}
			c.Image = s
		case "args":
			args, err := stringList(w, "config.args", v)
			if err != nil {
				return c, err
			}
			for _, a := range args {
				s, err := ic.interpolate(a, "config.args", false)
				if err != nil {
					return c, err
				}
				c.Args = append(c.Args, s)
			}
		case "command":
			s, ok := v.(string)
			if !ok {
				return c, w.errorf("config.command must be a string")
			}
			s, err := ic.interpolate(s, "config.command", false)
			if err != nil {
				return c, err
			}
			// Nomad makes command the image's CMD with args after it, keeping
			// the entrypoint.
			c.Args = append([]string{s}, c.Args...)
		case "entrypoint":
			ep, err := stringList(w, "config.entrypoint", v)
			if err != nil {
				return c, err
			}
			for _, e := range ep {
				s, err := ic.interpolate(e, "config.entrypoint", false)
				if err != nil {
					return c, err
				}
				c.Entrypoint = append(c.Entrypoint, s)
			}
		case "work_dir":
			s, ok := v.(string)
			if !ok {
				return c, w.errorf("config.work_dir must be a string")
			}
			c.WorkDir = s
		case "network_mode":
			s, _ := v.(string)
			switch s {
			case "", "host", "bridge":
				t.remark(w, "config.network_mode", RemarkDiffers, fmt.Sprintf("%q becomes %s: the task has its own address there, and listens on the group's container ports", s, t.opts.Target.network()))
			default:
				return c, w.errorf("config.network_mode %q is not supported", s)
			}
		case "ports":
			labels, err := stringList(w, "config.ports", v)
			if err != nil {
				return c, err
			}
			for _, l := range labels {
				if _, ok := ic.ports[l]; !ok {
					return c, w.errorf("config.ports names %q, which is not a port label of the group", l)
				}
			}
		case "cpu_hard_limit":
			if _, ok := v.(bool); !ok {
				return c, w.errorf("config.cpu_hard_limit must be a boolean")
			}
		case "force_pull", "auth_soft_fail", "image_pull_timeout":
			t.remark(w, "config."+k, RemarkIgnored, "images are local to the node; "+t.target+" pulls only when the image is missing")
		default:
			return c, w.errorf("config.%s is not supported", k)
		}
	}
	if c.Image == "" {
		return c, w.errorf("config.image is missing")
	}
	if task.KillTimeout != nil && *task.KillTimeout > 0 {
		d := *task.KillTimeout
		c.StopGrace = &d
	}
	c.StopSignal = task.KillSignal
	return c, nil
}

// env is the task's env block, then what its env templates render.
func (t *translator) env(w where, task *api.Task, ic *interpContext) (map[string]string, error) {
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
			env[k] = v
		}
	}
	return env, nil
}

// updateParallelism keeps the group's max_parallel; Nomad's health
// deadlines are remarked, not translated: the harness waits for health itself.
func (t *translator) updateParallelism(w where, g *api.TaskGroup) uint64 {
	n := uint64(1)
	if u := g.Update; u != nil {
		if u.MaxParallel != nil && *u.MaxParallel >= 0 {
			n = uint64(*u.MaxParallel)
		}
		if u.MinHealthyTime != nil || u.HealthyDeadline != nil || u.ProgressDeadline != nil || u.AutoRevert != nil || u.Canary != nil || u.HealthCheck != nil {
			t.remark(w, "update", RemarkIgnored, "only max_parallel becomes "+t.target+"'s update parallelism; the harness waits for health itself")
		}
	}
	return n
}

// restart maps Nomad's restart stanza (the task's, else the group's):
// attempts within interval, delay between them, and mode fail as giving up
// on the replica.
func (t *translator) restart(w where, g *api.TaskGroup, task *api.Task) (*Restart, error) {
	rp := task.RestartPolicy
	if rp == nil {
		rp = g.RestartPolicy
	}
	if rp == nil {
		return nil, nil
	}
	out := &Restart{Condition: RestartAny}
	if rp.Delay != nil {
		d := *rp.Delay
		out.Delay = &d
	}
	mode := deref(rp.Mode)
	switch mode {
	case "", "fail":
		if rp.Attempts != nil {
			if *rp.Attempts == 0 {
				out.Condition = RestartNone
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
