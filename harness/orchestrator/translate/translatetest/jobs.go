// Package translatetest holds the Nomad jobs the translator and the
// adapters built on it are tested with: hand-made jobs shaped like the
// packs, and the packs as rendered (testdata/*.json, see its README).
package translatetest

import (
	"embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Ptr is a pointer to a copy of v, for the api types' optional fields.
func Ptr[T any](v T) *T { return &v }

// Taewa is shaped like packs/taewa rendered for docker: one group in
// bridge mode, port http to 8080, an http check, the intent in job meta,
// 2 replicas, a restart and an update stanza.
func Taewa() *api.Job {
	return &api.Job{
		ID: Ptr("taewa-vertical"), Name: Ptr("taewa-vertical"), Type: Ptr("service"),
		Datacenters: []string{"dc1"},
		Meta: map[string]string{
			"orchbench_service": "taewa", "orchbench_cores": "0.5", "orchbench_memory_mib": "256", "orchbench_cpu_mode": "quota",
		},
		TaskGroups: []*api.TaskGroup{{
			Name:  Ptr("taewa"),
			Count: Ptr(2),
			Networks: []*api.NetworkResource{{
				Mode:         "bridge",
				DynamicPorts: []api.Port{{Label: "http", To: 8080}},
			}},
			Services: []*api.Service{{
				Name: "taewa", PortLabel: "http", Tags: []string{"orchbench"}, Provider: "consul",
				Checks: []api.ServiceCheck{{Name: "taewa-http", Type: "http", Path: "/?n=1", Interval: 2 * time.Second, Timeout: time.Second}},
			}},
			Update:           &api.UpdateStrategy{MaxParallel: Ptr(2), HealthCheck: Ptr("checks"), MinHealthyTime: Ptr(3 * time.Second)},
			RestartPolicy:    &api.RestartPolicy{Attempts: Ptr(2), Interval: Ptr(time.Minute), Delay: Ptr(2 * time.Second), Mode: Ptr("fail")},
			ReschedulePolicy: &api.ReschedulePolicy{Attempts: Ptr(0), Unlimited: Ptr(false)},
			Tasks: []*api.Task{{
				Name: "taewa", Driver: "docker",
				Config: map[string]any{
					"image": "orchbench/taewa:local", "ports": []any{"http"}, "cpu_hard_limit": true,
				},
				Env:         map[string]string{"PORT": "8080"},
				KillTimeout: Ptr(5 * time.Second),
				Resources:   &api.Resources{CPU: Ptr(1050), MemoryMB: Ptr(256)},
			}},
		}},
	}
}

// SocialNetwork is shaped like packs/social-network: host networking with
// dynamic ports, ${NOMAD_*} in args, upstream addresses from an env
// template, the intent in task meta, and ferretdb's data in the alloc dir.
// Its job ID is "sn"; the frontend is the measured service.
func SocialNetwork() *api.Job {
	group := func(name, port string, args []string, env map[string]string, meta map[string]string, tmpl string) *api.TaskGroup {
		check := api.ServiceCheck{Name: name, Type: "tcp", Interval: 3 * time.Second, Timeout: 2 * time.Second}
		if name == "frontend" {
			check = api.ServiceCheck{Name: name, Type: "http", Path: "/healthz", Interval: 3 * time.Second, Timeout: 2 * time.Second}
		}
		task := &api.Task{
			Name: name, Driver: "docker",
			Config: map[string]any{"network_mode": "host", "cpu_hard_limit": meta["orchbench_cpu_mode"] == "quota", "image": "orchbench/" + name + ":local", "args": toAny(args)},
			Env:    env, Meta: meta,
			Resources: &api.Resources{CPU: Ptr(2100), MemoryMB: Ptr(512)},
		}
		if tmpl != "" {
			task.Templates = []*api.Template{{DestPath: Ptr("local/upstreams.env"), Envvars: Ptr(true), ChangeMode: Ptr("restart"), EmbeddedTmpl: Ptr(tmpl)}}
		}
		return &api.TaskGroup{
			Name: Ptr(name), Count: Ptr(1),
			Networks: []*api.NetworkResource{{Mode: "host", DynamicPorts: []api.Port{{Label: port}}}},
			Services: []*api.Service{{Name: "sn-" + name, PortLabel: port, Checks: []api.ServiceCheck{check}}},
			Spreads:  []*api.Spread{{Attribute: "${node.unique.id}"}},
			Tasks:    []*api.Task{task},
		}
	}
	capped := map[string]string{"orchbench_cores": "1", "orchbench_memory_mib": "512", "orchbench_cpu_mode": "quota"}
	shares := map[string]string{"orchbench_cores": "0", "orchbench_memory_mib": "512", "orchbench_cpu_mode": "shares"}
	// USER_ADDR and MONGODB_URI as the social network's pack renders them
	// (instances of failed nodes left out), REDIS_ADDR as it once did
	upstreams := `USER_ADDR={{ $n := 0 }}{{ range $s := service "sn-user|any" }}{{ $up := true }}{{ range $s.Checks }}{{ if and (eq .CheckID "serfHealth") (ne .Status "passing") }}{{ $up = false }}{{ end }}{{ end }}{{ if $up }}{{ if $n }},{{ end }}{{ $n = 1 }}{{ $s.Address }}:{{ $s.Port }}{{ end }}{{ end }}{{ if not $n }}127.0.0.1:1{{ end }}
REDIS_ADDR={{ range $i, $s := service "sn-redis|any" }}{{ if $i }},{{ end }}{{ $s.Address }}:{{ $s.Port }}{{ else }}127.0.0.1:1{{ end }}
MONGODB_URI=mongodb://{{ $n := 0 }}{{ range $s := service "sn-ferretdb|any" }}{{ $up := true }}{{ range $s.Checks }}{{ if and (eq .CheckID "serfHealth") (ne .Status "passing") }}{{ $up = false }}{{ end }}{{ end }}{{ if and $up (not $n) }}{{ $n = 1 }}{{ $s.Address }}:{{ $s.Port }}{{ end }}{{ end }}{{ if not $n }}127.0.0.1:1{{ end }}/
PLAIN=value
`
	return &api.Job{
		ID: Ptr("sn"), Type: Ptr("service"),
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

// A Fixture is a pack as rendered, with what its translation must give.
type Fixture struct {
	Name     string // testdata/<Name>.json
	Services int
	Entry    string // the measured service's name
}

// Fixtures are the rendered packs in testdata.
var Fixtures = []Fixture{
	{"taewa-vertical", 1, "taewa-vertical-taewa"},
	{"social-network-vertical", 15, "social-network-vertical-frontend"},
	{"social-network-ha", 15, "social-network-ha-frontend"},
	// study 001's app in its widest form: PostgreSQL, Redis, v0's worker
	// (a group without a port or service) and the app under gunicorn
	{"voting-v0-gunicorn", 4, "voting-v0-baseline-gunicorn-voting"},
}

//go:embed testdata/*.json
var fixtures embed.FS

// Job reads the fixture's job.
func (f Fixture) Job() (*api.Job, error) {
	b, err := fixtures.ReadFile("testdata/" + f.Name + ".json")
	if err != nil {
		return nil, err
	}
	var job api.Job
	if err := json.Unmarshal(b, &job); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", f.Name, err)
	}
	return &job, nil
}
