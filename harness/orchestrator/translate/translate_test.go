package translate

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
)

var ptr = tt.Ptr[int]

// swarmish is the target the Swarm adapter passes.
var swarmish = Target{Name: "Swarm", CPUModes: []contract.CPUMode{contract.CPUModeQuota, contract.CPUModeShares}}

func opts(mhz float64) Options { return Options{MHzPerCore: mhz, Target: swarmish} }

func mustTranslate(t *testing.T, job *api.Job, o Options) *Plan {
	t.Helper()
	p, err := Translate(job, o)
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	return p
}

func hasRemark(p *Plan, stanza string) bool {
	for _, r := range p.Remarks {
		if r.Stanza == stanza {
			return true
		}
	}
	return false
}

func TestTranslateTaewa(t *testing.T) {
	p := mustTranslate(t, tt.Taewa(), opts(2100))
	if p.Job != "taewa-vertical" || p.Version == "" || len(p.Services) != 1 {
		t.Fatalf("plan: job %q version %q services %d", p.Job, p.Version, len(p.Services))
	}
	s := p.Services[0]
	if s.Name != "taewa-vertical-taewa" || s.Group != "taewa" || s.Task != "taewa" || s.Replicas != 2 || s.Port != 8080 ||
		!reflect.DeepEqual(s.Consul, []string{"taewa"}) || !reflect.DeepEqual(s.Ports, map[string]int{"http": 8080}) {
		t.Errorf("service: %+v", s)
	}
	c := s.Container
	if c.Image != "orchbench/taewa:local" || !reflect.DeepEqual(c.Env, map[string]string{"PORT": "8080"}) || c.Args != nil || c.Entrypoint != nil {
		t.Errorf("container: %+v", c)
	}
	if c.StopGrace == nil || *c.StopGrace != 5*time.Second || c.StopSignal != "" {
		t.Errorf("stop: grace %v signal %q", c.StopGrace, c.StopSignal)
	}
	if ck := s.Check; ck == nil || *ck != (Check{Type: "http", Address: "127.0.0.1:8080", Path: "/?n=1", Interval: 2 * time.Second, Timeout: time.Second}) {
		t.Errorf("check: %+v", s.Check)
	}
	if s.Declared != (contract.Task{Cores: 0.5, MemoryMiB: 256, CPUMode: contract.CPUModeQuota}) {
		t.Errorf("declared %+v", s.Declared)
	}
	if p.Entry == nil || *p.Entry != (Entry{Service: "taewa-vertical-taewa", Port: 8080}) {
		t.Errorf("entry %+v", p.Entry)
	}
	if r := s.Restart; r == nil || r.Condition != RestartAny || *r.MaxAttempts != 2 || *r.Window != time.Minute || *r.Delay != 2*time.Second {
		t.Errorf("restart %+v", r)
	}
	if s.UpdateParallelism != 2 || s.UsesAllocDir || !s.Placement.IsZero() {
		t.Errorf("update parallelism %d, alloc dir %v, placement %+v", s.UpdateParallelism, s.UsesAllocDir, s.Placement)
	}
	// what is not translated is said
	for _, stanza := range []string{"update", "reschedule/migrate", "meta", "region/datacenters", "service taewa tags/meta"} {
		if !hasRemark(p, stanza) {
			t.Errorf("no remark for %s in %v", stanza, p.Remarks)
		}
	}
}

func TestTranslateSocialNetwork(t *testing.T) {
	p := mustTranslate(t, tt.SocialNetwork(), opts(0))
	svc := func(name string) *Service {
		s := p.Service(name)
		if s == nil {
			t.Fatalf("no service %s", name)
		}
		return s
	}
	// a Consul name finds its group's service
	ferret := svc("sn-ferretdb")
	if ferret.Name != "sn-ferretdb" || ferret != svc("sn-ferretdb") {
		t.Errorf("ferretdb is %q", ferret.Name)
	}
	if got := ferret.Container.Args; !reflect.DeepEqual(got, []string{"--listen-addr", "0.0.0.0:8000", "--data-dir", "/alloc/data/ferretdb"}) {
		t.Errorf("ferretdb args %q", got)
	}
	if !ferret.UsesAllocDir || svc("sn-redis").UsesAllocDir {
		t.Errorf("alloc dir: ferretdb %v, redis %v", ferret.UsesAllocDir, svc("sn-redis").UsesAllocDir)
	}
	// shares: no CPU cap declared, whatever the cores say
	if ferret.Declared != (contract.Task{MemoryMiB: 512, CPUMode: contract.CPUModeShares}) {
		t.Errorf("ferretdb declared %+v", ferret.Declared)
	}
	if got := svc("sn-redis").Container.Args; !reflect.DeepEqual(got, []string{"--bind", "0.0.0.0", "--port", "8000"}) {
		t.Errorf("redis args %q", got)
	}
	if got := svc("sn-memcached").Container.Args; !reflect.DeepEqual(got, []string{"-l", "0.0.0.0", "-p", "8000"}) {
		t.Errorf("memcached args %q", got)
	}
	if c := svc("sn-redis").Check; c == nil || c.Type != "tcp" || c.Address != "127.0.0.1:8000" {
		t.Errorf("redis check %+v", c)
	}
	user := svc("sn-user")
	wantEnv := map[string]string{
		"MACHINE_ID":  AllocIndex,
		"MONGODB_URI": "mongodb://sn-ferretdb:8000/",
		"PLAIN":       "value",
		"REDIS_ADDR":  "sn-redis:8000",
		"USER_ADDR":   "sn-user:8000",
	}
	if got := user.Container.Env; !reflect.DeepEqual(got, wantEnv) {
		t.Errorf("user env\n got %q\nwant %q", got, wantEnv)
	}
	if user.Declared != (contract.Task{Cores: 1, MemoryMiB: 512, CPUMode: contract.CPUModeQuota}) {
		t.Errorf("user declared %+v", user.Declared)
	}
	if p.Entry == nil || p.Entry.Service != "sn-frontend" || p.Entry.Port != 8000 {
		t.Errorf("entry %+v", p.Entry)
	}
	if c := svc("sn-frontend").Check; c == nil || c.Type != "http" || c.Address != "127.0.0.1:8000" || c.Path != "/healthz" {
		t.Errorf("frontend check %+v", c)
	}
	for _, stanza := range []string{"spread ${node.unique.id}", "config.network_mode", "template 1 (destination local/upstreams.env)"} {
		if !hasRemark(p, stanza) {
			t.Errorf("no remark for %s", stanza)
		}
	}
}

// TestTranslateFixtures translates the packs as rendered, so a pack change
// that the translator cannot follow shows here.
func TestTranslateFixtures(t *testing.T) {
	for _, f := range tt.Fixtures {
		job, err := f.Job()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Translate(job, opts(2100))
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if len(p.Services) != f.Services || p.Entry == nil || p.Entry.Service != f.Entry {
			t.Errorf("%s: %d services, entry %+v", f.Name, len(p.Services), p.Entry)
		}
		for _, s := range p.Services {
			// a group that registers no Consul service (the voting pack's
			// v0 worker) is healthy when running, on Nomad as here
			if s.Check == nil && len(s.Consul) > 0 {
				t.Errorf("%s: %s has no health check", f.Name, s.Name)
			}
			words := append([]string{}, s.Container.Args...)
			for _, v := range s.Container.Env {
				words = append(words, strings.ReplaceAll(v, AllocIndex, "0"))
			}
			for _, a := range words {
				if strings.Contains(a, "${") || strings.Contains(a, "127.0.0.1:1") {
					t.Errorf("%s: %s: untranslated %q", f.Name, s.Name, a)
				}
			}
		}
		if sum := p.RemarkSummary(); len(sum) == 0 || len(sum) > len(p.Remarks) || len(p.Services) > 1 && len(sum) >= len(p.Remarks) {
			t.Errorf("%s: summary of %d remarks has %d lines", f.Name, len(p.Remarks), len(p.RemarkSummary()))
		}
	}
}

func TestTranslateResourceFallback(t *testing.T) {
	base := func() *api.Job {
		j := tt.Taewa()
		j.Meta = map[string]string{"orchbench_service": "taewa"}
		return j
	}
	quota, shares := contract.CPUModeQuota, contract.CPUModeShares
	cases := []struct {
		name   string
		mutate func(*api.Job)
		mhz    float64
		want   contract.Task
	}{
		{"cpu_hard_limit: MHz over MHz per core", func(*api.Job) {}, 2100, contract.Task{Cores: 0.5, MemoryMiB: 256, CPUMode: quota}},
		// the intent is the same on every orchestrator: docker MHz mean a quota, which Nomad enforces only with cpu_hard_limit (its limits gate refuses the step otherwise)
		{"no cpu_hard_limit: the declared quota all the same", func(j *api.Job) { j.TaskGroups[0].Tasks[0].Config["cpu_hard_limit"] = false }, 2100, contract.Task{Cores: 0.5, MemoryMiB: 256, CPUMode: quota}},
		{"memory_max is the limit", func(j *api.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = ptr(1024) }, 2100, contract.Task{Cores: 0.5, MemoryMiB: 1024, CPUMode: quota}},
		{"meta memory 0: no memory limit", func(j *api.Job) { j.TaskGroups[0].Meta = map[string]string{"orchbench_memory_mib": "0"} }, 2100, contract.Task{Cores: 0.5, CPUMode: quota}},
		{"task meta wins over job meta", func(j *api.Job) {
			j.Meta["orchbench_cores"] = "2"
			j.TaskGroups[0].Tasks[0].Meta = map[string]string{"orchbench_cores": "0.25"}
		}, 0, contract.Task{Cores: 0.25, MemoryMiB: 256, CPUMode: quota}},
		{"cpu mode shares: no CPU limit", func(j *api.Job) { j.Meta["orchbench_cores"], j.Meta["orchbench_cpu_mode"] = "1", "shares" }, 0, contract.Task{MemoryMiB: 256, CPUMode: shares, WeightCores: 1}},
	}
	for _, c := range cases {
		j := base()
		c.mutate(j)
		p, err := Translate(j, opts(c.mhz))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := p.Services[0].Declared; got != c.want {
			t.Errorf("%s: declared %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTranslatePortsAndNames(t *testing.T) {
	j := tt.Taewa()
	g := j.TaskGroups[0]
	g.Networks[0].DynamicPorts = []api.Port{{Label: "http", To: 8000}, {Label: "metrics"}, {Label: "admin"}}
	g.Networks[0].ReservedPorts = []api.Port{{Label: "fixed", Value: 9100}}
	g.Services = append(g.Services, &api.Service{Name: "taewa-admin", PortLabel: "admin"})
	task := g.Tasks[0]
	task.Env["ADMIN"] = "${NOMAD_ADDR_admin} ${NOMAD_PORT_metrics} ${NOMAD_PORT_fixed} {{literal}} $(NOT_EXPANDED)"
	task.Env["SLOT"] = "replica-${ NOMAD_ALLOC_INDEX }"
	task.Config["args"] = []any{"${NOMAD_JOB_NAME}/${NOMAD_GROUP_NAME}/${NOMAD_TASK_NAME}", "${NOMAD_META_orchbench_cores}", "${PORT}", "${HOME}"}
	p := mustTranslate(t, j, opts(0))
	s := p.Services[0]
	// dynamic labels in name order take the first free port from 8000: admin 8001, metrics 8002
	want := map[string]int{"http": 8000, "admin": 8001, "metrics": 8002, "fixed": 9100}
	if !reflect.DeepEqual(s.Ports, want) {
		t.Errorf("ports %v, want %v", s.Ports, want)
	}
	// the service is named for the job and group whatever the Consul names; all are kept
	if s.Name != "taewa-vertical-taewa" || !reflect.DeepEqual(s.Consul, []string{"taewa", "taewa-admin"}) || s.Port != 8000 {
		t.Errorf("a group with two Consul services: name %q, Consul %q, port %d", s.Name, s.Consul, s.Port)
	}
	if p.Service("taewa-admin") != s {
		t.Error("a second Consul name does not find its service")
	}
	// env values are literal: the adapter escapes them for its own expansion
	if env := s.Container.Env["ADMIN"]; env != "0.0.0.0:8001 8002 9100 {{literal}} $(NOT_EXPANDED)" {
		t.Errorf("env %q", env)
	}
	if env := s.Container.Env["SLOT"]; env != "replica-"+AllocIndex {
		t.Errorf("env %q", env)
	}
	if a := s.Container.Args; !reflect.DeepEqual(a, []string{"taewa-vertical/taewa/taewa", "0.5", "8080", "${HOME}"}) {
		t.Errorf("args %q", a)
	}
}

func TestExpandIndex(t *testing.T) {
	swarmEscape := func(s string) string { return strings.ReplaceAll(s, "{{", `{{"{{"}}`) }
	for _, c := range []struct {
		value, index, want string
		escape             func(string) string
	}{
		{"replica-" + AllocIndex + " {{x}}", "{{.Task.Slot}}", `replica-{{.Task.Slot}} {{"{{"}}x}}`, swarmEscape},
		{AllocIndex + "/" + AllocIndex, "$(INDEX)", "$(INDEX)/$(INDEX)", nil},
		{"plain {{x}}", "i", `plain {{"{{"}}x}}`, swarmEscape},
		{"", "i", "", swarmEscape},
	} {
		if got := ExpandIndex(c.value, c.escape, c.index); got != c.want {
			t.Errorf("ExpandIndex(%q, %q) = %q, want %q", c.value, c.index, got, c.want)
		}
	}
}

func TestTranslateCommandEntrypoint(t *testing.T) {
	j := tt.Taewa()
	task := j.TaskGroups[0].Tasks[0]
	task.Config["entrypoint"] = []any{"/bin/sh", "-c"}
	task.Config["command"] = "node"
	task.Config["args"] = []any{"server.js", "${NOMAD_PORT_http}"}
	task.Config["work_dir"] = "/app"
	task.User, task.KillSignal = "node", "SIGINT"
	c := mustTranslate(t, j, opts(0)).Services[0].Container
	if !reflect.DeepEqual(c.Entrypoint, []string{"/bin/sh", "-c"}) || !reflect.DeepEqual(c.Args, []string{"node", "server.js", "8080"}) {
		t.Errorf("entrypoint %q args %q", c.Entrypoint, c.Args)
	}
	if c.WorkDir != "/app" || c.User != "node" || c.StopSignal != "SIGINT" {
		t.Errorf("work dir %q user %q stop signal %q", c.WorkDir, c.User, c.StopSignal)
	}
}

func TestTranslateRestartAndPlacement(t *testing.T) {
	cases := []struct {
		name   string
		policy *api.RestartPolicy
		want   *Restart
	}{
		{"no stanza", nil, nil},
		{"attempts 0: no restart", &api.RestartPolicy{Attempts: ptr(0), Mode: tt.Ptr("fail")}, &Restart{Condition: RestartNone}},
		{"mode delay: unlimited", &api.RestartPolicy{Attempts: ptr(3), Interval: tt.Ptr(time.Minute), Delay: tt.Ptr(time.Second), Mode: tt.Ptr("delay")},
			&Restart{Condition: RestartAny, Delay: tt.Ptr(time.Second)}},
	}
	for _, c := range cases {
		j := tt.Taewa()
		j.TaskGroups[0].RestartPolicy = c.policy
		got := mustTranslate(t, j, opts(0)).Services[0].Restart
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: restart %+v, want %+v", c.name, got, c.want)
		}
	}
	j := tt.Taewa()
	j.TaskGroups[0].Constraints = []*api.Constraint{{Operand: "distinct_hosts", RTarget: "true"}, {LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	p := mustTranslate(t, j, opts(0))
	if pl := p.Services[0].Placement; pl.MaxPerNode != 1 {
		t.Errorf("distinct_hosts: placement %+v", pl)
	}
	if !hasRemark(p, "constraint ${attr.kernel.name} = linux") {
		t.Errorf("no remark for the kernel constraint in %v", p.Remarks)
	}
}

func TestTranslateVersion(t *testing.T) {
	a := mustTranslate(t, tt.Taewa(), opts(2100)).Version
	if b := mustTranslate(t, tt.Taewa(), opts(2100)).Version; a != b {
		t.Errorf("the same job hashes to %s and %s", a, b)
	}
	j := tt.Taewa()
	j.Version, j.ModifyIndex, j.Status = tt.Ptr(uint64(7)), tt.Ptr(uint64(99)), tt.Ptr("running")
	if b := mustTranslate(t, j, opts(2100)).Version; a != b {
		t.Errorf("server fields change the version: %s vs %s", a, b)
	}
	j = tt.Taewa()
	j.TaskGroups[0].Count = ptr(3)
	if b := mustTranslate(t, j, opts(2100)).Version; a == b {
		t.Error("a new count keeps the version")
	}
	if b := mustTranslate(t, tt.Taewa(), opts(3000)).Version; a == b {
		t.Error("new MHz per core keep the version")
	}
	other := opts(2100)
	other.Target.Name = "Kubernetes"
	if b := mustTranslate(t, tt.Taewa(), other).Version; a == b {
		t.Error("another target keeps the version")
	}
	other = opts(2100)
	other.Target.Revision = "2"
	if b := mustTranslate(t, tt.Taewa(), other).Version; a == b {
		t.Error("a new adapter revision keeps the version")
	}
}
