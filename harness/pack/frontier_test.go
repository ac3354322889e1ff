package pack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/conformance"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/kubernetes"
	"github.com/orchbench/orchbench/harness/orchestrator/swarm"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/testutil"
)

// These tests pin packs/frontier (study 003): the web tier follows the
// variant and scale, the remote service is always exactly one, Redis, the
// remote service and the pool are never capped, each route's probe takes
// only that route's right answer, and Swarm and Kubernetes translate every
// shape. Jobs are parsed by the pinned nomad binary, as they are submitted.

// frontierJob renders packs/frontier with vars and parses it with nomad.
func frontierJob(t *testing.T, vars map[string]string) (*api.Job, error) {
	return packJob(t, "frontier", vars)
}

// packJob renders a pack's one job (mhz_per_core 2000 unless vars say)
// and parses it with nomad.
func packJob(t *testing.T, name string, vars map[string]string) (*api.Job, error) {
	t.Helper()
	dir, err := pack.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pack.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"mhz_per_core": "2000"}
	for k, v := range vars {
		all[k] = v
	}
	r, err := p.Render(all, nil)
	if err != nil {
		return nil, err
	}
	return parseWithNomad(t, r.Files[name+".nomad"]), nil
}

func mustFrontierJob(t *testing.T, vars map[string]string) *api.Job {
	t.Helper()
	job, err := frontierJob(t, vars)
	if err != nil {
		t.Fatalf("render frontier %v: %v", vars, err)
	}
	return job
}

func parseWithNomad(t *testing.T, hcl string) *api.Job {
	t.Helper()
	nomad := filepath.Join(testutil.RepoRoot(t), ".tools", "bin", "nomad")
	if _, err := os.Stat(nomad); err != nil {
		if nomad, err = exec.LookPath("nomad"); err != nil {
			t.Fatalf("the frontier pack tests parse jobs with the pinned nomad binary: run ./justw tools (%v)", err)
		}
	}
	job, err := conformance.ParseJob(nomad, hcl)
	if err != nil {
		t.Fatalf("nomad does not parse the rendered job: %v\n%s", err, hcl)
	}
	return job
}

type frontierTask struct {
	count  int
	cpu    int
	intent contract.Task
	task   *api.Task
}

func frontierTasks(t *testing.T, job *api.Job) map[string]frontierTask {
	t.Helper()
	out := map[string]frontierTask{}
	for _, g := range job.TaskGroups {
		if len(g.Tasks) != 1 {
			t.Fatalf("group %s has %d tasks", *g.Name, len(g.Tasks))
		}
		task := g.Tasks[0]
		intent, err := contract.ParseTask(job, g, task, 2000)
		if err != nil {
			t.Fatal(err)
		}
		out[*g.Name] = frontierTask{count: *g.Count, cpu: *task.Resources.CPU, intent: intent, task: task}
	}
	return out
}

func TestFrontierShapes(t *testing.T) {
	for _, c := range []struct {
		vars      map[string]string
		job       string
		count     int
		cpu, mem  int
		cores     float64
		mode      contract.CPUMode
		hardLimit bool
	}{
		// the study's two shapes: 1 and 3 instances of the web tier
		{map[string]string{}, "frontier-baseline", 1, 2000, 1024, 1, contract.CPUModeQuota, true},
		{map[string]string{"scale": "3", "resource_scale": "0.25"}, "frontier-baseline", 3, 500, 1024, 0.25, contract.CPUModeQuota, true},
		{map[string]string{"variant": "horizontal", "resource_scale": "0.25"}, "frontier-horizontal", 3, 500, 1024, 0.25, contract.CPUModeQuota, true},
		{map[string]string{"variant": "vertical", "resource_scale": "0.5"}, "frontier-vertical", 1, 2000, 2048, 1, contract.CPUModeQuota, true},
		{map[string]string{"variant": "unlimited", "scale": "3", "job_name": "f3"}, "f3", 3, 2000, 1024, 0, contract.CPUModeShares, false},
	} {
		job := mustFrontierJob(t, c.vars)
		tasks := frontierTasks(t, job)
		web := tasks["frontier"]
		hard, _ := web.task.Config["cpu_hard_limit"].(bool)
		if *job.ID != c.job || web.count != c.count || web.cpu != c.cpu || *web.task.Resources.MemoryMB != c.mem ||
			web.intent.Cores != c.cores || web.intent.CPUMode != c.mode || hard != c.hardLimit {
			t.Errorf("%v: job %s, web tier %d x cpu %d mem %d, intent %+v, cpu_hard_limit %v", c.vars, *job.ID, web.count, web.cpu,
				*web.task.Resources.MemoryMB, web.intent, hard)
		}
		if job.Meta["orchbench_service"] != c.job || job.Meta["orchbench_count"] != strconv.Itoa(c.count) {
			t.Errorf("%v: job meta %v", c.vars, job.Meta)
		}
		// the remote service is exactly one whatever the shape; the support
		// tasks are never capped and never follow the variant
		for name, want := range map[string]struct {
			mem  int
			role contract.Role
		}{"remote": {64, contract.RoleService}, "pool": {256, contract.RoleService}, "redis": {128, contract.RoleDatastore}} {
			s := tasks[name]
			hard, _ := s.task.Config["cpu_hard_limit"].(bool)
			if s.count != 1 || hard || s.intent.Cores != 0 || s.intent.CPUMode != contract.CPUModeShares || s.intent.MemoryMiB != want.mem ||
				s.intent.Role != want.role || s.cpu != 200 {
				t.Errorf("%v: %s runs %d, cpu %d, hard limit %v, intent %+v", c.vars, name, s.count, s.cpu, hard, s.intent)
			}
		}
	}
}

// Each route's probe takes that route's right answer and nothing else: not
// an upstream's error message, not an empty body, not another route's.
func TestFrontierProbes(t *testing.T) {
	answers := map[string]string{
		"/":          "hello from frontier",
		"/remote":    `{"from":"remote","request":1,"work_ms":750}`,
		"/alternate": `{"from":"pool","request":12,"work_ms":751,"instance":3,"cold":true}`,
		"/cached":    `{"from":"remote","request":7,"work_ms":0}`,
	}
	wrong := []string{"", "remote: connection refused by 10.0.0.1:8080\n", "alternate: the function pool throttled the invocation (its concurrency limit is reached)\n",
		"cached: redis 127.0.0.1:6379 is not connected\n", `{"error":"throttled","concurrency_limit":1000}`}
	for route, right := range answers {
		job := mustFrontierJob(t, map[string]string{"route": route})
		app, err := contract.ParseApp(job)
		if err != nil {
			t.Fatal(err)
		}
		if app.Probe.Path != route || app.LoadPath != route {
			t.Errorf("route %s: probe %s, load %s", route, app.Probe.Path, app.LoadPath)
		}
		if !app.Probe.Regex.MatchString(right) || len(right) < app.Probe.MinBytes {
			t.Errorf("route %s: the probe (%s, >= %d bytes) refuses the right answer %s", route, app.Probe.Regex, app.Probe.MinBytes, right)
		}
		for other, answer := range answers {
			// /remote and /cached answer alike: a hit is what the remote said
			same := (route == "/remote" || route == "/cached") && (other == "/remote" || other == "/cached")
			if other != route && !same && app.Probe.Regex.MatchString(answer) {
				t.Errorf("route %s: the probe accepts %s's answer %s", route, other, answer)
			}
		}
		for _, w := range wrong {
			if app.Probe.Regex.MatchString(w) {
				t.Errorf("route %s: the probe accepts %q", route, w)
			}
		}
	}
	// the smallest right answers are exactly the floors
	for route, smallest := range map[string]string{
		"/remote":    `{"from":"remote","request":1,"work_ms":0}`,
		"/alternate": `{"from":"pool","request":1,"work_ms":0,"instance":1,"cold":true}`,
		"/":          "hello from frontier",
	} {
		app, _ := contract.ParseApp(mustFrontierJob(t, map[string]string{"route": route}))
		if len(smallest) != app.Probe.MinBytes {
			t.Errorf("route %s: orchbench_probe_min_bytes %d, the smallest right answer has %d", route, app.Probe.MinBytes, len(smallest))
		}
	}
}

// The settings reach the programs' environments, and the web tier finds its
// three upstreams of its own job in Consul.
func TestFrontierSettings(t *testing.T) {
	job := mustFrontierJob(t, map[string]string{"cache_keys": "20", "cache_ttl": "30", "remote_seconds": "0.5", "pool_concurrency": "50",
		"pool_cold_start": "0", "pool_idle_reap": "120", "idle_timeout": "60", "upstream_timeout": "30", "job_name": "f"})
	tasks := frontierTasks(t, job)
	for task, env := range map[string]map[string]string{
		"frontier": {"CACHE_KEYS": "20", "CACHE_TTL": "30", "IDLE_TIMEOUT": "60", "UPSTREAM_TIMEOUT": "30"},
		"remote":   {"REMOTE_SECONDS": "0.5", "REMOTE_BACKLOG": "2048"},
		"pool":     {"POOL_SECONDS": "0.5", "POOL_CONCURRENCY": "50", "POOL_COLD_START": "0", "POOL_IDLE_REAP": "120"},
	} {
		for k, v := range env {
			if got := tasks[task].task.Env[k]; got != v {
				t.Errorf("%s: %s = %q, want %q", task, k, got, v)
			}
		}
	}
	for _, task := range []string{"remote", "pool"} {
		if tasks[task].task.Config["command"] != "python3" || !strings.Contains(strings.Join(anyStrings(tasks[task].task.Config["args"]), " "), "/service/"+task+".py") {
			t.Errorf("%s runs %v %v", task, tasks[task].task.Config["command"], tasks[task].task.Config["args"])
		}
	}
	tmpl := *tasks["frontier"].task.Templates[0].EmbeddedTmpl
	for _, up := range []string{"REMOTE_ADDR={{ with service \"f-remote|any\" }}", "POOL_ADDR={{ with service \"f-pool|any\" }}", "REDIS_ADDR={{ with service \"f-redis|any\" }}"} {
		if !strings.Contains(tmpl, up) {
			t.Errorf("the web tier's template lacks %s:\n%s", up, tmpl)
		}
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestFrontierRejectsBadValues(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"route": "/nope"}, "valid routes are: /, /remote, /alternate, /cached"},
		{map[string]string{"variant": "ha"}, "valid variants are: baseline, vertical, horizontal, unlimited"},
		{map[string]string{"scale": "1.5"}, "scale must be a whole number of web tier instances"},
		{map[string]string{"cache_keys": "0"}, "cache_keys must be a whole number >= 1"},
		{map[string]string{"pool_concurrency": "2.5"}, "pool_concurrency must be a whole number >= 1"},
		{map[string]string{"remote_seconds": "-1"}, "remote_seconds must be a number of seconds >= 0"},
		{map[string]string{"idle_timeout": "0"}, "idle_timeout must be a number of seconds >= 0.1"},
		{map[string]string{"redis_memory_mib": "8"}, "redis_memory_mib must be a whole number >= 16"},
		{map[string]string{"support_cores": "0"}, "support_cores must be > 0"},
	} {
		_, err := frontierJob(t, c.vars)
		if err == nil || !strings.Contains(err.Error(), "frontier: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error naming the pack and %q", c.vars, err, c.want)
		}
	}
}

// Swarm and Kubernetes translate every shape: five services, the entry
// the measured one balancing over the web tier's DNS name, the web tier
// with its replicas, the remote service one, and the web tier's
// upstream addresses the services' DNS names.
func TestFrontierTranslates(t *testing.T) {
	for _, vars := range []map[string]string{{}, {"variant": "horizontal", "resource_scale": "0.25", "route": "/cached"}, {"variant": "unlimited", "scale": "3"}} {
		job := mustFrontierJob(t, vars)
		w, err := orchestrator.NewWorkload(job)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := swarm.Translate(job, swarm.Options{MHzPerCore: 2000})
		if err != nil {
			t.Fatalf("swarm %v: %v", vars, err)
		}
		kp, err := kubernetes.Translate(w, 2000)
		if err != nil {
			t.Fatalf("kubernetes %v: %v", vars, err)
		}
		if len(sp.Specs) != 5 {
			t.Errorf("swarm %v: %d service specs", vars, len(sp.Specs))
		}
		for name, services := range map[string][]*translate.Service{"swarm": sp.Services, "kubernetes": kp.Services} {
			if got, want := replicas(services, *job.ID+"-frontier"), *job.TaskGroups[4].Count; got != want {
				t.Errorf("%s %v: the web tier has %d replicas, want %d", name, vars, got, want)
			}
			if got := replicas(services, *job.ID+"-remote"); got != 1 {
				t.Errorf("%s %v: the remote service has %d replicas", name, vars, got)
			}
			if got := replicas(services, *job.ID+"-entry"); got != 1 {
				t.Errorf("%s %v: the entry has %d replicas", name, vars, got)
			}
		}
		if kp.Entry == nil || kp.Entry.Service != *job.ID+"-entry" || sp.Entry == nil || sp.Entry.Service != *job.ID+"-entry" {
			t.Errorf("%v: entries %+v, %+v", vars, kp.Entry, sp.Entry)
		}
		for _, svc := range kp.Services {
			if svc.Group == "entry" {
				// every web tier instance behind one DNS name, which the orchestrator spreads
				want := regexp.MustCompile(`^tcp-balance --listen \S+ --backend ` + regexp.QuoteMeta(*job.ID+"-web") + `:[0-9]+$`)
				if got := strings.Join(svc.Container.Args, " "); !want.MatchString(got) {
					t.Errorf("%v: the entry runs %q, want the web tier's DNS name as its backend", vars, got)
				}
			}
			if svc.Group != "frontier" {
				continue
			}
			for key, service := range map[string]string{"REMOTE_ADDR": "remote", "POOL_ADDR": "pool", "REDIS_ADDR": "redis"} {
				want := regexp.MustCompile("^" + regexp.QuoteMeta(*job.ID+"-"+service) + ":[0-9]+$")
				if !want.MatchString(svc.Container.Env[key]) {
					t.Errorf("%v: %s = %q, want %s's DNS name and port", vars, key, svc.Container.Env[key], service)
				}
			}
		}
	}
}

func replicas(services []*translate.Service, name string) int {
	for _, s := range services {
		if s.Name == name {
			return s.Replicas
		}
	}
	return -1
}
