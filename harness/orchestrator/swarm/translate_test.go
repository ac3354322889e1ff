package swarm

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/swarm"
)

func ptr[T any](v T) *T { return &v }

// taewaJob is shaped like packs/taewa rendered for docker: one group in
// bridge mode, port http to 8080, an http check, the intent in job meta.
func taewaJob() *api.Job {
	return &api.Job{
		ID: ptr("taewa-vertical"), Name: ptr("taewa-vertical"), Type: ptr("service"),
		Datacenters: []string{"dc1"},
		Meta: map[string]string{
			"orchbench_service": "taewa", "orchbench_cores": "0.5", "orchbench_memory_mib": "256", "orchbench_cpu_mode": "quota",
		},
		TaskGroups: []*api.TaskGroup{{
			Name:  ptr("taewa"),
			Count: ptr(2),
			Networks: []*api.NetworkResource{{
				Mode:         "bridge",
				DynamicPorts: []api.Port{{Label: "http", To: 8080}},
			}},
			Services: []*api.Service{{
				Name: "taewa", PortLabel: "http", Tags: []string{"orchbench"}, Provider: "consul",
				Checks: []api.ServiceCheck{{Name: "taewa-http", Type: "http", Path: "/?n=1", Interval: 2 * time.Second, Timeout: time.Second}},
			}},
			Update:           &api.UpdateStrategy{MaxParallel: ptr(2), HealthCheck: ptr("checks"), MinHealthyTime: ptr(3 * time.Second)},
			RestartPolicy:    &api.RestartPolicy{Attempts: ptr(2), Interval: ptr(time.Minute), Delay: ptr(2 * time.Second), Mode: ptr("fail")},
			ReschedulePolicy: &api.ReschedulePolicy{Attempts: ptr(0), Unlimited: ptr(false)},
			Tasks: []*api.Task{{
				Name: "taewa", Driver: "docker",
				Config: map[string]any{
					"image": "orchbench/taewa:local", "ports": []any{"http"}, "cpu_hard_limit": true,
				},
				Env:         map[string]string{"PORT": "8080"},
				KillTimeout: ptr(5 * time.Second),
				Resources:   &api.Resources{CPU: ptr(1050), MemoryMB: ptr(256)},
			}},
		}},
	}
}

// socialJob is shaped like packs/social-network: host networking with
// dynamic ports, ${NOMAD_*} in args, upstream addresses from an env template,
// the intent in task meta, and ferretdb's data in the alloc dir.
func socialJob() *api.Job {
	group := func(name, port string, args []string, env map[string]string, meta map[string]string, tmpl string) *api.TaskGroup {
		check := api.ServiceCheck{Name: name, Type: "tcp", Interval: 3 * time.Second, Timeout: 2 * time.Second}
		if name == "frontend" {
			check = api.ServiceCheck{Name: name, Type: "http", Path: "/healthz", Interval: 3 * time.Second, Timeout: 2 * time.Second}
		}
		task := &api.Task{
			Name: name, Driver: "docker",
			Config: map[string]any{"network_mode": "host", "cpu_hard_limit": meta["orchbench_cpu_mode"] == "quota", "image": "orchbench/" + name + ":local", "args": toAny(args)},
			Env:    env, Meta: meta,
			Resources: &api.Resources{CPU: ptr(2100), MemoryMB: ptr(512)},
		}
		if tmpl != "" {
			task.Templates = []*api.Template{{DestPath: ptr("local/upstreams.env"), Envvars: ptr(true), ChangeMode: ptr("restart"), EmbeddedTmpl: ptr(tmpl)}}
		}
		return &api.TaskGroup{
			Name: ptr(name), Count: ptr(1),
			Networks: []*api.NetworkResource{{Mode: "host", DynamicPorts: []api.Port{{Label: port}}}},
			Services: []*api.Service{{Name: "sn-" + name, PortLabel: port, Checks: []api.ServiceCheck{check}}},
			Spreads:  []*api.Spread{{Attribute: "${node.unique.id}"}},
			Tasks:    []*api.Task{task},
		}
	}
	capped := map[string]string{"orchbench_cores": "1", "orchbench_memory_mib": "512", "orchbench_cpu_mode": "quota"}
	shares := map[string]string{"orchbench_cores": "0", "orchbench_memory_mib": "512", "orchbench_cpu_mode": "shares"}
	upstreams := `USER_ADDR={{ range $i, $s := service "sn-user|any" }}{{ if $i }},{{ end }}{{ $s.Address }}:{{ $s.Port }}{{ else }}127.0.0.1:1{{ end }}
REDIS_ADDR={{ range $i, $s := service "sn-redis|any" }}{{ if $i }},{{ end }}{{ $s.Address }}:{{ $s.Port }}{{ else }}127.0.0.1:1{{ end }}
MONGODB_URI=mongodb://{{ with service "sn-ferretdb|any" }}{{ with index . 0 }}{{ .Address }}:{{ .Port }}{{ end }}{{ else }}127.0.0.1:1{{ end }}/
PLAIN=value
`
	return &api.Job{
		ID: ptr("sn"), Type: ptr("service"),
		Meta: map[string]string{"orchbench_service": "sn-frontend"},
		TaskGroups: []*api.TaskGroup{
			group("ferretdb", "rpc", []string{"--listen-addr", "${NOMAD_ADDR_rpc}", "--data-dir", "/alloc/data/ferretdb"}, nil, shares, ""),
			group("redis", "rpc", []string{"--bind", "${NOMAD_IP_rpc}", "--port", "${NOMAD_PORT_rpc}"}, nil, shares, ""),
			group("memcached", "rpc", []string{"-l", "${NOMAD_IP_rpc}", "-p", "${NOMAD_PORT_rpc}"}, nil, shares, ""),
			group("user", "rpc", []string{"--service", "user", "--listen-addr", "${NOMAD_ADDR_rpc}"}, map[string]string{"MACHINE_ID": "${NOMAD_ALLOC_INDEX}"}, capped, upstreams),
			group("frontend", "http", []string{"--service", "frontend", "--listen-addr", "${NOMAD_ADDR_http}"}, map[string]string{"MACHINE_ID": "${NOMAD_ALLOC_INDEX}", "GOMEMLIMIT": "400MiB"}, capped, "USER_ADDR={{ range service \"sn-user\" }}{{ .Address }}:{{ .Port }}{{ end }}\n"),
		},
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func mustTranslate(t *testing.T, job *api.Job, opts Options) *Plan {
	t.Helper()
	p, err := Translate(job, opts)
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	return p
}

func TestTranslateTaewa(t *testing.T) {
	p := mustTranslate(t, taewaJob(), Options{MHzPerCore: 2100})
	if p.Job != "taewa-vertical" || p.Network != "orchbench-taewa-vertical" || len(p.Services) != 1 {
		t.Fatalf("plan: job %q network %q services %d", p.Job, p.Network, len(p.Services))
	}
	s := p.Services[0]
	if s.Name != "taewa-vertical-taewa" || s.Group != "taewa" || s.Task != "taewa" || s.Replicas != 2 || s.Port != 8080 {
		t.Errorf("service: %+v", s)
	}
	spec := s.Spec
	cs := spec.TaskTemplate.ContainerSpec
	if cs.Image != "orchbench/taewa:local" || !reflect.DeepEqual(cs.Env, []string{"PORT=8080"}) || cs.Args != nil || cs.Command != nil {
		t.Errorf("container: image %q env %q args %q command %q", cs.Image, cs.Env, cs.Args, cs.Command)
	}
	if *spec.Mode.Replicated.Replicas != 2 {
		t.Errorf("replicas %d", *spec.Mode.Replicated.Replicas)
	}
	// the adapter checks from outside the container; the image's own check is off
	if hc := cs.Healthcheck; hc == nil || !reflect.DeepEqual(hc.Test, []string{"NONE"}) {
		t.Errorf("container health check: %+v", cs.Healthcheck)
	}
	if c := s.Check; c == nil || *c != (Check{Type: "http", Address: "127.0.0.1:8080", Path: "/?n=1", Interval: 2 * time.Second, Timeout: time.Second}) {
		t.Errorf("check: %+v", s.Check)
	}
	res := spec.TaskTemplate.Resources
	if res.Limits.NanoCPUs != 5e8 || res.Reservations.NanoCPUs != 5e8 || res.Limits.MemoryBytes != 256<<20 || res.Reservations.MemoryBytes != 256<<20 {
		t.Errorf("resources: limits %+v reservations %+v", res.Limits, res.Reservations)
	}
	if s.Declared != (Declaration{Cores: 0.5, MemoryMiB: 256, CPUMode: CPUModeQuota}) {
		t.Errorf("declared %+v", s.Declared)
	}
	if spec.EndpointSpec.Mode != swarm.ResolutionModeDNSRR {
		t.Errorf("endpoint mode %q", spec.EndpointSpec.Mode)
	}
	wantPorts := []swarm.PortConfig{{Protocol: "tcp", TargetPort: 8080, PublishedPort: 0, PublishMode: swarm.PortConfigPublishModeHost}}
	if !reflect.DeepEqual(spec.EndpointSpec.Ports, wantPorts) || p.Entry == nil || *p.Entry != (Entry{Service: "taewa-vertical-taewa", Port: 8080}) {
		t.Errorf("entry: ports %+v entry %+v", spec.EndpointSpec.Ports, p.Entry)
	}
	// the Consul name is an alias on the job's own network: two jobs of one app both have it
	if n := spec.TaskTemplate.Networks; len(n) != 1 || n[0].Target != "orchbench-taewa-vertical" || !reflect.DeepEqual(n[0].Aliases, []string{"taewa"}) {
		t.Errorf("networks %+v", n)
	}
	for _, labels := range []map[string]string{spec.Labels, cs.Labels} {
		if labels[LabelJob] != "taewa-vertical" || labels[LabelGroup] != "taewa" || labels[LabelTask] != "taewa" || labels[LabelVersion] != p.Version || p.Version == "" {
			t.Errorf("labels %v (version %q)", labels, p.Version)
		}
	}
	if rp := spec.TaskTemplate.RestartPolicy; rp.Condition != swarm.RestartPolicyConditionAny || *rp.MaxAttempts != 2 || *rp.Window != time.Minute || *rp.Delay != 2*time.Second {
		t.Errorf("restart policy %+v", rp)
	}
	if spec.UpdateConfig.Parallelism != 2 || *cs.StopGracePeriod != 5*time.Second {
		t.Errorf("update %+v, stop grace %v", spec.UpdateConfig, cs.StopGracePeriod)
	}
	// what is not translated is said
	for _, stanza := range []string{"update", "reschedule/migrate", "meta", "region/datacenters", "service taewa tags/meta"} {
		if !hasRemark(p, stanza) {
			t.Errorf("no remark for %s in %v", stanza, p.Remarks)
		}
	}
}

func hasRemark(p *Plan, stanza string) bool {
	for _, r := range p.Remarks {
		if r.Stanza == stanza {
			return true
		}
	}
	return false
}

func TestTranslateSocialNetwork(t *testing.T) {
	p := mustTranslate(t, socialJob(), Options{})
	svc := func(name string) *Service {
		s := p.Service(name)
		if s == nil {
			t.Fatalf("no service %s", name)
		}
		return s
	}
	ferret := svc("sn-ferretdb")
	if got := ferret.Spec.TaskTemplate.ContainerSpec.Args; !reflect.DeepEqual(got, []string{"--listen-addr", "0.0.0.0:8000", "--data-dir", "/alloc/data/ferretdb"}) {
		t.Errorf("ferretdb args %q", got)
	}
	if m := ferret.Spec.TaskTemplate.ContainerSpec.Mounts; len(m) != 1 || m[0].Target != "/alloc/data" || m[0].Source != "sn-ferretdb-data-{{.Task.Slot}}" || m[0].Type != "volume" || m[0].VolumeOptions.Labels[LabelJob] != "sn" {
		t.Errorf("ferretdb mounts %+v", m)
	}
	if ferret.Spec.TaskTemplate.Resources.Limits.NanoCPUs != 0 || ferret.Spec.TaskTemplate.Resources.Limits.MemoryBytes != 512<<20 || ferret.Declared.CPUMode != CPUModeShares {
		t.Errorf("ferretdb resources %+v declared %+v", ferret.Spec.TaskTemplate.Resources.Limits, ferret.Declared)
	}
	if got := svc("sn-redis").Spec.TaskTemplate.ContainerSpec.Args; !reflect.DeepEqual(got, []string{"--bind", "0.0.0.0", "--port", "8000"}) {
		t.Errorf("redis args %q", got)
	}
	if got := svc("sn-memcached").Spec.TaskTemplate.ContainerSpec.Args; !reflect.DeepEqual(got, []string{"-l", "0.0.0.0", "-p", "8000"}) {
		t.Errorf("memcached args %q", got)
	}
	if c := svc("sn-redis").Check; c == nil || c.Type != "tcp" || c.Address != "127.0.0.1:8000" {
		t.Errorf("redis check %+v", c)
	}
	user := svc("sn-user")
	wantEnv := []string{
		"MACHINE_ID={{.Task.Slot}}",
		"MONGODB_URI=mongodb://sn-ferretdb:8000/",
		"PLAIN=value",
		"REDIS_ADDR=sn-redis:8000",
		"USER_ADDR=sn-user:8000",
	}
	if got := user.Spec.TaskTemplate.ContainerSpec.Env; !reflect.DeepEqual(got, wantEnv) {
		t.Errorf("user env\n got %q\nwant %q", got, wantEnv)
	}
	if user.Spec.TaskTemplate.Resources.Limits.NanoCPUs != 1e9 || user.Declared.CPUMode != CPUModeQuota {
		t.Errorf("user resources %+v", user.Spec.TaskTemplate.Resources.Limits)
	}
	fe := svc("sn-frontend")
	if p.Entry == nil || p.Entry.Service != "sn-frontend" || p.Entry.Port != 8000 || len(fe.Spec.EndpointSpec.Ports) != 1 {
		t.Errorf("entry %+v ports %+v", p.Entry, fe.Spec.EndpointSpec.Ports)
	}
	if len(user.Spec.EndpointSpec.Ports) != 0 {
		t.Errorf("a service that is not the entry publishes %+v", user.Spec.EndpointSpec.Ports)
	}
	if c := fe.Check; c == nil || c.Type != "http" || c.Address != "127.0.0.1:8000" || c.Path != "/healthz" {
		t.Errorf("frontend check %+v", c)
	}
	for _, stanza := range []string{"spread ${node.unique.id}", "config.network_mode", "ephemeral_disk", "template 1 (destination local/upstreams.env)"} {
		if !hasRemark(p, stanza) {
			t.Errorf("no remark for %s", stanza)
		}
	}
}

// TestTranslateFixtures translates the packs as rendered (testdata/*.json
// are `orchbench pack render` output turned into JSON by `nomad job run
// -output`), so a pack change that the translator cannot follow shows here.
func TestTranslateFixtures(t *testing.T) {
	for _, c := range []struct {
		file     string
		services int
		entry    string
	}{
		{"taewa-vertical", 1, "taewa-vertical-taewa"},
		{"social-network-vertical", 15, "social-network-vertical-frontend"},
		{"social-network-ha", 15, "social-network-ha-frontend"},
	} {
		b, err := os.ReadFile("testdata/" + c.file + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var job api.Job
		if err := json.Unmarshal(b, &job); err != nil {
			t.Fatal(err)
		}
		p, err := Translate(&job, Options{MHzPerCore: 2100})
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if len(p.Services) != c.services || p.Entry == nil || p.Entry.Service != c.entry {
			t.Errorf("%s: %d services, entry %+v", c.file, len(p.Services), p.Entry)
		}
		for _, s := range p.Services {
			cs := s.Spec.TaskTemplate.ContainerSpec
			if s.Check == nil {
				t.Errorf("%s: %s has no health check", c.file, s.Name)
			}
			for _, a := range append(append([]string{}, cs.Args...), cs.Env...) {
				if strings.Contains(a, "${") || strings.Contains(a, "127.0.0.1:1") {
					t.Errorf("%s: %s: untranslated %q", c.file, s.Name, a)
				}
			}
		}
		if sum := p.RemarkSummary(); len(sum) == 0 || len(sum) > len(p.Remarks) || len(p.Services) > 1 && len(sum) >= len(p.Remarks) {
			t.Errorf("%s: summary of %d remarks has %d lines", c.file, len(p.Remarks), len(p.RemarkSummary()))
		}
	}
}

func TestTranslateResourceFallback(t *testing.T) {
	base := func() *api.Job {
		j := taewaJob()
		j.Meta = map[string]string{"orchbench_service": "taewa"}
		return j
	}
	cases := []struct {
		name   string
		mutate func(*api.Job)
		opts   Options
		want   Declaration
	}{
		{"cpu_hard_limit: MHz over MHz per core", func(*api.Job) {}, Options{MHzPerCore: 2100}, Declaration{Cores: 0.5, MemoryMiB: 256, CPUMode: CPUModeQuota}},
		// the intent is the same on every orchestrator: docker MHz mean a quota, which Nomad enforces only with cpu_hard_limit (its limits gate refuses the step otherwise)
		{"no cpu_hard_limit: the declared quota all the same", func(j *api.Job) { j.TaskGroups[0].Tasks[0].Config["cpu_hard_limit"] = false }, Options{MHzPerCore: 2100}, Declaration{Cores: 0.5, MemoryMiB: 256, CPUMode: CPUModeQuota}},
		{"memory_max is the limit", func(j *api.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = ptr(1024) }, Options{MHzPerCore: 2100}, Declaration{Cores: 0.5, MemoryMiB: 1024, CPUMode: CPUModeQuota}},
		{"meta memory 0: no memory limit", func(j *api.Job) { j.TaskGroups[0].Meta = map[string]string{"orchbench_memory_mib": "0"} }, Options{MHzPerCore: 2100}, Declaration{Cores: 0.5, CPUMode: CPUModeQuota}},
		{"task meta wins over job meta", func(j *api.Job) {
			j.Meta["orchbench_cores"] = "2"
			j.TaskGroups[0].Tasks[0].Meta = map[string]string{"orchbench_cores": "0.25"}
		}, Options{}, Declaration{Cores: 0.25, MemoryMiB: 256, CPUMode: CPUModeQuota}},
		{"cpu mode shares: no CPU limit", func(j *api.Job) { j.Meta["orchbench_cores"], j.Meta["orchbench_cpu_mode"] = "1", "shares" }, Options{}, Declaration{MemoryMiB: 256, CPUMode: CPUModeShares}},
	}
	for _, c := range cases {
		j := base()
		c.mutate(j)
		p, err := Translate(j, c.opts)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		s := p.Services[0]
		if s.Declared != c.want {
			t.Errorf("%s: declared %+v, want %+v", c.name, s.Declared, c.want)
		}
		r := s.Spec.TaskTemplate.Resources
		var limNano, limMem int64
		if r.Limits != nil {
			limNano, limMem = r.Limits.NanoCPUs, r.Limits.MemoryBytes
			if r.Reservations.NanoCPUs != limNano || r.Reservations.MemoryBytes != limMem {
				t.Errorf("%s: reservations %+v differ from limits %+v", c.name, r.Reservations, r.Limits)
			}
		}
		if limNano != int64(c.want.Cores*1e9) || limMem != int64(c.want.MemoryMiB)<<20 {
			t.Errorf("%s: limits %d nano CPUs, %d bytes", c.name, limNano, limMem)
		}
	}
}

func TestTranslatePortsAndNames(t *testing.T) {
	j := taewaJob()
	g := j.TaskGroups[0]
	g.Networks[0].DynamicPorts = []api.Port{{Label: "http", To: 8000}, {Label: "metrics"}, {Label: "admin"}}
	g.Networks[0].ReservedPorts = []api.Port{{Label: "fixed", Value: 9100}}
	g.Services = append(g.Services, &api.Service{Name: "taewa-admin", PortLabel: "admin"})
	j.TaskGroups[0].Tasks[0].Env["ADMIN"] = "${NOMAD_ADDR_admin} ${NOMAD_PORT_metrics} ${NOMAD_PORT_fixed} {{literal}}"
	j.TaskGroups[0].Tasks[0].Config["args"] = []any{"${NOMAD_JOB_NAME}/${NOMAD_GROUP_NAME}/${NOMAD_TASK_NAME}", "${NOMAD_META_orchbench_cores}", "${PORT}", "${HOME}"}
	p := mustTranslate(t, j, Options{})
	s := p.Services[0]
	// dynamic labels in name order take the first free port from 8000: admin 8001, metrics 8002
	want := map[string]int{"http": 8000, "admin": 8001, "metrics": 8002, "fixed": 9100}
	if !reflect.DeepEqual(s.Ports, want) {
		t.Errorf("ports %v, want %v", s.Ports, want)
	}
	if s.Name != "taewa-vertical-taewa" {
		t.Errorf("a group with two Consul services is named %q", s.Name)
	}
	if a := s.Spec.TaskTemplate.Networks[0].Aliases; !reflect.DeepEqual(a, []string{"taewa", "taewa-admin"}) {
		t.Errorf("aliases %q", a)
	}
	var env string
	for _, e := range s.Spec.TaskTemplate.ContainerSpec.Env {
		if strings.HasPrefix(e, "ADMIN=") {
			env = e
		}
	}
	if env != `ADMIN=0.0.0.0:8001 8002 9100 {{"{{"}}literal}}` {
		t.Errorf("env %q", env)
	}
	if a := s.Spec.TaskTemplate.ContainerSpec.Args; !reflect.DeepEqual(a, []string{"taewa-vertical/taewa/taewa", "0.5", "8080", "${HOME}"}) {
		t.Errorf("args %q", a)
	}
}

func TestTranslateCommandEntrypoint(t *testing.T) {
	j := taewaJob()
	j.TaskGroups[0].Tasks[0].Config["entrypoint"] = []any{"/bin/sh", "-c"}
	j.TaskGroups[0].Tasks[0].Config["command"] = "node"
	j.TaskGroups[0].Tasks[0].Config["args"] = []any{"server.js", "${NOMAD_PORT_http}"}
	cs := mustTranslate(t, j, Options{}).Services[0].Spec.TaskTemplate.ContainerSpec
	if !reflect.DeepEqual(cs.Command, []string{"/bin/sh", "-c"}) || !reflect.DeepEqual(cs.Args, []string{"node", "server.js", "8080"}) {
		t.Errorf("command %q args %q", cs.Command, cs.Args)
	}
}

func TestTranslateVersion(t *testing.T) {
	a := mustTranslate(t, taewaJob(), Options{MHzPerCore: 2100}).Version
	if b := mustTranslate(t, taewaJob(), Options{MHzPerCore: 2100}).Version; a != b {
		t.Errorf("the same job hashes to %s and %s", a, b)
	}
	j := taewaJob()
	j.Version, j.ModifyIndex, j.Status = ptr(uint64(7)), ptr(uint64(99)), ptr("running")
	if b := mustTranslate(t, j, Options{MHzPerCore: 2100}).Version; a != b {
		t.Errorf("server fields change the version: %s vs %s", a, b)
	}
	j = taewaJob()
	j.TaskGroups[0].Count = ptr(3)
	if b := mustTranslate(t, j, Options{MHzPerCore: 2100}).Version; a == b {
		t.Error("a new count keeps the version")
	}
	if b := mustTranslate(t, taewaJob(), Options{MHzPerCore: 3000}).Version; a == b {
		t.Error("new options keep the version")
	}
}

// TestTranslateRefusals: every stanza the adapter cannot honour is an error
// that names the adapter, the place and the stanza.
func TestTranslateRefusals(t *testing.T) {
	task := func(j *api.Job) *api.Task { return j.TaskGroups[0].Tasks[0] }
	group := func(j *api.Job) *api.TaskGroup { return j.TaskGroups[0] }
	cases := []struct {
		name   string
		mutate func(*api.Job)
		want   string
	}{
		{"exec driver", func(j *api.Job) { task(j).Driver = "exec" }, `job taewa-vertical, group taewa, task taewa: driver "exec" is not supported`},
		{"raw_exec driver", func(j *api.Job) { task(j).Driver = "raw_exec" }, `task taewa: driver "raw_exec"`},
		{"two main tasks", func(j *api.Job) {
			group(j).Tasks = append(group(j).Tasks, &api.Task{Name: "cache", Driver: "docker", Config: map[string]any{"image": "x"}})
		}, "group taewa: more than one main task (taewa, cache)"},
		{"prestart hook", func(j *api.Job) {
			group(j).Tasks = append(group(j).Tasks, &api.Task{Name: "init", Driver: "docker", Lifecycle: &api.TaskLifecycle{Hook: "prestart"}})
		}, "task init: lifecycle prestart is not supported"},
		{"sidecar", func(j *api.Job) {
			group(j).Tasks = append(group(j).Tasks, &api.Task{Name: "proxy", Driver: "docker", Lifecycle: &api.TaskLifecycle{Hook: "prestart", Sidecar: true}})
		}, "task proxy: lifecycle prestart sidecar"},
		{"file template", func(j *api.Job) {
			task(j).Templates = []*api.Template{{DestPath: ptr("local/server.js"), EmbeddedTmpl: ptr("x")}}
		}, "template 1 (destination local/server.js): a template rendering a file is not supported"},
		{"template source", func(j *api.Job) {
			task(j).Templates = []*api.Template{{SourcePath: ptr("app.tpl"), Envvars: ptr(true)}}
		}, "template 1: a source file is not supported"},
		{"template key function", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: ptr(true), EmbeddedTmpl: ptr(`A={{ key "config/a" }}`)}}
		}, `template 1 line 1: template function "key" is not supported`},
		{"template unknown service", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: ptr(true), EmbeddedTmpl: ptr(`A={{ range service "elsewhere" }}{{ .Address }}{{ end }}`)}}
		}, `service "elsewhere" is not registered by any group of the job`},
		{"template tag filter", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: ptr(true), EmbeddedTmpl: ptr(`A={{ range service "v1.taewa" }}{{ .Address }}{{ end }}`)}}
		}, "a tag filter is not supported"},
		{"template other field", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: ptr(true), EmbeddedTmpl: ptr(`A={{ range service "taewa" }}{{ .Tags }}{{ end }}`)}}
		}, "field .Tags is not supported"},
		{"artifact", func(j *api.Job) { task(j).Artifacts = []*api.TaskArtifact{{}} }, "task taewa: artifact is not supported"},
		{"volume", func(j *api.Job) { group(j).Volumes = map[string]*api.VolumeRequest{"data": {}} }, "group taewa: volume is not supported"},
		{"csi volume_mount", func(j *api.Job) { task(j).VolumeMounts = []*api.VolumeMount{{}} }, "volume_mount is not supported"},
		{"ephemeral_disk sticky", func(j *api.Job) { group(j).EphemeralDisk = &api.EphemeralDisk{Sticky: ptr(true)} }, "group taewa: ephemeral_disk with sticky = true is not supported"},
		{"ephemeral_disk migrate", func(j *api.Job) { group(j).EphemeralDisk = &api.EphemeralDisk{Migrate: ptr(true)} }, "ephemeral_disk with migrate = true"},
		{"constraint", func(j *api.Job) {
			group(j).Constraints = []*api.Constraint{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "="}}
		}, `group taewa: constraint "${meta.rack} = r1" is not supported`},
		{"job distinct_hosts", func(j *api.Job) { j.Constraints = []*api.Constraint{{Operand: "distinct_hosts"}} }, "job taewa-vertical: constraint distinct_hosts at job level"},
		{"vault", func(j *api.Job) { task(j).Vault = &api.Vault{} }, "task taewa: vault is not supported"},
		{"connect", func(j *api.Job) { group(j).Services[0].Connect = &api.ConsulConnect{} }, "service taewa: connect is not supported"},
		{"unknown NOMAD variable", func(j *api.Job) { task(j).Env["X"] = "${NOMAD_HOST_PORT_http}" }, "task taewa: env X uses ${NOMAD_HOST_PORT_http}, which the swarm adapter cannot provide"},
		{"unknown port label", func(j *api.Job) { task(j).Config["args"] = []any{"${NOMAD_ADDR_grpc}"} }, "config.args uses ${NOMAD_ADDR_grpc}"},
		{"attr", func(j *api.Job) { task(j).Config["args"] = []any{"${attr.unique.hostname}"} }, "config.args uses ${attr.unique.hostname}"},
		{"node", func(j *api.Job) { task(j).Env["N"] = "${node.datacenter}" }, "env N uses ${node.datacenter}"},
		{"alloc index outside env", func(j *api.Job) { task(j).Config["args"] = []any{"--id", "${NOMAD_ALLOC_INDEX}"} }, "config.args uses ${NOMAD_ALLOC_INDEX}, which Swarm can only give in env"},
		{"alloc logs", func(j *api.Job) { task(j).Config["args"] = []any{"--log", "${NOMAD_ALLOC_DIR}/logs/x"} }, "config.args uses /alloc/logs/x: only the alloc data dir"},
		{"cores unparsable", func(j *api.Job) { j.Meta["orchbench_cores"] = "half" }, `job taewa-vertical, group taewa, task taewa: job meta orchbench_cores = "half" is not a number`},
		{"memory unparsable", func(j *api.Job) { task(j).Meta = map[string]string{"orchbench_memory_mib": "1.5"} }, `task meta orchbench_memory_mib = "1.5" is not a whole number`},
		{"cpu mode cpuset", func(j *api.Job) { j.Meta["orchbench_cpu_mode"] = "cpuset" }, `cpu mode cpuset (0.5 whole cores, an exclusive cpuset) cannot be honoured`},
		{"cpu mode bogus", func(j *api.Job) { j.Meta["orchbench_cpu_mode"] = "turbo" }, `orchbench_cpu_mode = "turbo" is not a CPU mode`},
		{"cores resource", func(j *api.Job) {
			j.Meta = map[string]string{}
			task(j).Resources.Cores = ptr(2)
		}, "cpu mode cpuset (2 whole cores, an exclusive cpuset) cannot be honoured"},
		{"MHz without MHz per core", func(j *api.Job) { j.Meta = map[string]string{} }, "needs the node's MHz per core"},
		{"script check", func(j *api.Job) {
			group(j).Services[0].Checks = []api.ServiceCheck{{Name: "s", Type: "script", Command: "/bin/true"}}
		}, `service taewa check s: type "script" is not supported`},
		{"grpc check", func(j *api.Job) { group(j).Services[0].Checks = []api.ServiceCheck{{Name: "g", Type: "grpc"}} }, `type "grpc" is not supported`},
		{"https check", func(j *api.Job) { group(j).Services[0].Checks[0].Protocol = "https" }, `protocol "https" is not supported`},
		{"two checks", func(j *api.Job) {
			group(j).Services[0].Checks = append(group(j).Services[0].Checks, api.ServiceCheck{Type: "tcp"})
		}, "2 health checks: a Docker container has one health check"},
		{"unknown config key", func(j *api.Job) { task(j).Config["volumes"] = []any{"/a:/b"} }, "task taewa: config.volumes is not supported"},
		{"network mode cni", func(j *api.Job) { group(j).Networks[0].Mode = "cni/mynet" }, `group taewa: network mode "cni/mynet" is not supported`},
		{"batch job", func(j *api.Job) { j.Type = ptr("batch") }, `job taewa-vertical: type "batch" is not supported`},
		{"periodic", func(j *api.Job) { j.Periodic = &api.PeriodicConfig{} }, "periodic is not supported"},
		{"entry unknown", func(j *api.Job) { j.Meta["orchbench_service"] = "nope" }, `meta orchbench_service names service "nope", which no group registers`},
		{"spread by rack", func(j *api.Job) { group(j).Spreads = []*api.Spread{{Attribute: "${meta.rack}"}} }, `spread over "${meta.rack}" is not supported`},
		{"interpolated image", func(j *api.Job) { task(j).Config["image"] = "orchbench/${NOMAD_META_x}" }, "interpolation in the image is not supported"},
		{"service name not a DNS name", func(j *api.Job) { group(j).Services[0].Name = "taewa.web" }, `Consul service name "taewa.web" is not a valid DNS name on the overlay network`},
	}
	for _, c := range cases {
		j := taewaJob()
		c.mutate(j)
		_, err := Translate(j, Options{})
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "swarm: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant swarm: ...%s...", c.name, err, c.want)
		}
	}
}
