package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/zclconf/go-cty/cty"
)

var anyType = cty.DynamicPseudoType

// shape is a rendered combination as the harness reads it.
type shape struct {
	where string
	jobs  []*api.Job
	apps  []contract.App
	// tasks by "group/task": job names follow the variant, groups do not
	tasks map[string]taskShape
	// mhzPerCore is the render's mhz_per_core, 0 when the pack has none
	mhzPerCore float64
}

type taskShape struct {
	group   string
	count   int
	driver  string
	mhz     int // resources.cpu, 0 when cores are reserved
	intent  contract.Task
	service bool // the group registers the service the variant sizes
	// measured: the group registers the measured service, with checks
	measured bool
	checks   int
	// hardLimit is the docker driver's cpu_hard_limit, without which its
	// CPU share is no quota at all
	hardLimit bool
}

// render renders one combination and parses every job with nomad.
func (c Checker) render(p *pack.Pack, overrides map[string]string, add func(string, string, ...any)) (shape, bool) {
	set := map[string]string{}
	for k, v := range overrides {
		if v != "" {
			set[k] = v
		}
	}
	s := shape{where: describe(set), tasks: map[string]taskShape{}}
	if s.where == "" {
		s.where = "defaults"
	}
	r, err := p.Render(set, nil)
	if err != nil {
		add(s.where, "does not render: %v", err)
		return s, false
	}
	if len(r.JobFiles()) == 0 {
		add(s.where, "renders no job (no *.nomad.tpl output)")
		return s, false
	}
	mhz := 0.0
	if v, ok := r.Values[pack.MHzVariable]; ok && !v.IsNull() && v.Type() == cty.Number {
		mhz, _ = v.AsBigFloat().Float64()
	}
	s.mhzPerCore = mhz
	ok := true
	for _, name := range r.JobFiles() {
		job, err := c.parse(r.Files[name])
		if err != nil {
			add(s.where, "%s: Nomad does not parse the rendered job: %v", r.TemplatePath(name), err)
			ok = false
			continue
		}
		app, err := contract.ParseApp(job)
		if err != nil {
			add(s.where, "%s: meta contract: %v", r.TemplatePath(name), err)
			ok = false
			continue
		}
		s.jobs, s.apps = append(s.jobs, job), append(s.apps, app)
		for _, g := range job.TaskGroups {
			for _, t := range g.Tasks {
				intent, err := contract.ParseTask(job, g, t, mhz)
				if err != nil {
					add(s.where, "%s: %v", r.TemplatePath(name), err)
					ok = false
					continue
				}
				ts := taskShape{group: *g.Name, driver: t.Driver, intent: intent}
				ts.service, _ = registers(g, t, app.ScaledService())
				ts.measured, ts.checks = registers(g, t, app.Service)
				ts.hardLimit, _ = t.Config["cpu_hard_limit"].(bool)
				if g.Count != nil {
					ts.count = *g.Count
				}
				if t.Resources != nil && t.Resources.CPU != nil && (t.Resources.Cores == nil || *t.Resources.Cores == 0) {
					ts.mhz = *t.Resources.CPU
				}
				s.tasks[*g.Name+"/"+t.Name] = ts
			}
		}
	}
	return s, ok
}

// registers: whether the group or task registers the measured Consul
// service, and with how many health checks.
func registers(g *api.TaskGroup, t *api.Task, service string) (bool, int) {
	if service == "" {
		return false, 0
	}
	for _, s := range append(append([]*api.Service(nil), g.Services...), t.Services...) {
		if s != nil && s.Name == service {
			return true, len(s.Checks)
		}
	}
	return false, 0
}

// parse hands the job to `nomad job run -output` (ParseJob).
func (c Checker) parse(hcl string) (*api.Job, error) { return ParseJob(c.Nomad, hcl) }

// ParseJob hands a job specification to the nomad binary's
// `job run -output`, which parses it locally with Nomad's own jobspec
// parser and prints what it would submit; nothing is sent.
func ParseJob(nomad, hcl string) (*api.Job, error) {
	dir, err := os.MkdirTemp("", "orchbench-conformance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "job.nomad.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(nomad, "job", "run", "-output", path)
	// nothing is sent; an unreachable address proves it
	cmd.Env = append(os.Environ(), "NOMAD_ADDR=http://127.0.0.1:1")
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return nil, fmt.Errorf("%s", msg)
	}
	var wrapped struct{ Job *api.Job }
	if err := json.Unmarshal(out, &wrapped); err != nil || wrapped.Job == nil || wrapped.Job.ID == nil {
		return nil, fmt.Errorf("nomad job run -output printed no job: %v", err)
	}
	return wrapped.Job, nil
}

func cores(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
