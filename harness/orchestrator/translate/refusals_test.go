package translate

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
)

// refusal is a change to the taewa job that no target can honour, and the
// part of the error that must name the place and the stanza.
type refusal struct {
	name   string
	mutate func(*api.Job)
	want   string
}

func refusals() []refusal {
	task := func(j *api.Job) *api.Task { return j.TaskGroups[0].Tasks[0] }
	group := func(j *api.Job) *api.TaskGroup { return j.TaskGroups[0] }
	return []refusal{
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
			task(j).Templates = []*api.Template{{DestPath: tt.Ptr("local/server.js"), EmbeddedTmpl: tt.Ptr("x")}}
		}, "template 1 (destination local/server.js): a template rendering a file is not supported"},
		{"template source", func(j *api.Job) {
			task(j).Templates = []*api.Template{{SourcePath: tt.Ptr("app.tpl"), Envvars: tt.Ptr(true)}}
		}, "template 1: a source file is not supported"},
		{"template key function", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: tt.Ptr(true), EmbeddedTmpl: tt.Ptr(`A={{ key "config/a" }}`)}}
		}, `template 1 line 1: template function "key" is not supported`},
		{"template unknown service", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: tt.Ptr(true), EmbeddedTmpl: tt.Ptr(`A={{ range service "elsewhere" }}{{ .Address }}{{ end }}`)}}
		}, `service "elsewhere" is not registered by any group of the job`},
		{"template tag filter", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: tt.Ptr(true), EmbeddedTmpl: tt.Ptr(`A={{ range service "v1.taewa" }}{{ .Address }}{{ end }}`)}}
		}, "a tag filter is not supported"},
		{"template string outside a comparison", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: tt.Ptr(true), EmbeddedTmpl: tt.Ptr(`A={{ range service "taewa" }}{{ .Address }}{{ "x" }}{{ end }}`)}}
		}, `string "x" is only allowed as a service name or compared with eq/ne`},
		{"template other field", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: tt.Ptr(true), EmbeddedTmpl: tt.Ptr(`A={{ range service "taewa" }}{{ .Tags }}{{ end }}`)}}
		}, "field .Tags is not supported"},
		{"template holding the index marker", func(j *api.Job) {
			task(j).Templates = []*api.Template{{Envvars: tt.Ptr(true), EmbeddedTmpl: tt.Ptr(`A=${NOMAD_ALLOC_INDEX}`)}}
		}, "template 1 line 1: ${NOMAD_ALLOC_INDEX} in a template is not supported"},
		{"meta holding the index marker", func(j *api.Job) {
			j.Meta["id"] = "${NOMAD_ALLOC_INDEX}"
			task(j).Env["ID"] = "${NOMAD_META_id}"
		}, `env ID: ${NOMAD_META_id} is "${NOMAD_ALLOC_INDEX}"`},
		{"artifact", func(j *api.Job) { task(j).Artifacts = []*api.TaskArtifact{{}} }, "task taewa: artifact is not supported"},
		{"volume", func(j *api.Job) { group(j).Volumes = map[string]*api.VolumeRequest{"data": {}} }, "group taewa: volume is not supported"},
		{"csi volume_mount", func(j *api.Job) { task(j).VolumeMounts = []*api.VolumeMount{{}} }, "volume_mount is not supported"},
		{"ephemeral_disk sticky", func(j *api.Job) { group(j).EphemeralDisk = &api.EphemeralDisk{Sticky: tt.Ptr(true)} }, "group taewa: ephemeral_disk with sticky = true is not supported"},
		{"ephemeral_disk migrate", func(j *api.Job) { group(j).EphemeralDisk = &api.EphemeralDisk{Migrate: tt.Ptr(true)} }, "ephemeral_disk with migrate = true"},
		{"constraint", func(j *api.Job) {
			group(j).Constraints = []*api.Constraint{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "="}}
		}, `group taewa: constraint "${meta.rack} = r1" is not supported`},
		{"job distinct_hosts", func(j *api.Job) { j.Constraints = []*api.Constraint{{Operand: "distinct_hosts"}} }, "job taewa-vertical: constraint distinct_hosts at job level"},
		{"vault", func(j *api.Job) { task(j).Vault = &api.Vault{} }, "task taewa: vault is not supported"},
		{"connect", func(j *api.Job) { group(j).Services[0].Connect = &api.ConsulConnect{} }, "service taewa: connect is not supported"},
		{"unknown NOMAD variable", func(j *api.Job) { task(j).Env["X"] = "${NOMAD_HOST_PORT_http}" }, "task taewa: env X uses ${NOMAD_HOST_PORT_http}, which the"},
		{"unknown port label", func(j *api.Job) { task(j).Config["args"] = []any{"${NOMAD_ADDR_grpc}"} }, "config.args uses ${NOMAD_ADDR_grpc}"},
		{"attr", func(j *api.Job) { task(j).Config["args"] = []any{"${attr.unique.hostname}"} }, "config.args uses ${attr.unique.hostname}"},
		{"node", func(j *api.Job) { task(j).Env["N"] = "${node.datacenter}" }, "env N uses ${node.datacenter}"},
		{"alloc index outside env", func(j *api.Job) { task(j).Config["args"] = []any{"--id", "${NOMAD_ALLOC_INDEX}"} }, "config.args uses ${NOMAD_ALLOC_INDEX}, which"},
		{"alloc logs", func(j *api.Job) { task(j).Config["args"] = []any{"--log", "${NOMAD_ALLOC_DIR}/logs/x"} }, "config.args uses /alloc/logs/x: only the alloc data dir"},
		{"cores unparsable", func(j *api.Job) { j.Meta["orchbench_cores"] = "half" }, `job taewa-vertical, group taewa, task taewa: job meta orchbench_cores = "half" is not a number`},
		{"memory unparsable", func(j *api.Job) { task(j).Meta = map[string]string{"orchbench_memory_mib": "1.5"} }, `task meta orchbench_memory_mib = "1.5" is not a whole number`},
		{"cpu mode cpuset", func(j *api.Job) { j.Meta["orchbench_cpu_mode"] = "cpuset" }, `cpu mode cpuset (0.5 whole cores, an exclusive cpuset) cannot be honoured`},
		{"cpu mode unenforced", func(j *api.Job) { j.Meta["orchbench_cpu_mode"] = "unenforced" }, `cpu mode "unenforced" cannot be honoured`},
		{"cpu mode bogus", func(j *api.Job) { j.Meta["orchbench_cpu_mode"] = "turbo" }, `orchbench_cpu_mode = "turbo" is not a CPU mode`},
		{"cores resource", func(j *api.Job) {
			j.Meta = map[string]string{}
			task(j).Resources.Cores = tt.Ptr(2)
		}, "cpu mode cpuset (2 whole cores, an exclusive cpuset) cannot be honoured"},
		{"quota of nothing", func(j *api.Job) { j.Meta["orchbench_cores"] = "0" }, "cpu mode quota with no cores declared"},
		{"MHz without MHz per core", func(j *api.Job) { j.Meta = map[string]string{} }, "needs the node's MHz per core"},
		{"script check", func(j *api.Job) {
			group(j).Services[0].Checks = []api.ServiceCheck{{Name: "s", Type: "script", Command: "/bin/true"}}
		}, `service taewa check s: type "script" is not supported`},
		{"grpc check", func(j *api.Job) { group(j).Services[0].Checks = []api.ServiceCheck{{Name: "g", Type: "grpc"}} }, `type "grpc" is not supported`},
		{"https check", func(j *api.Job) { group(j).Services[0].Checks[0].Protocol = "https" }, `protocol "https" is not supported`},
		{"two checks", func(j *api.Job) {
			group(j).Services[0].Checks = append(group(j).Services[0].Checks, api.ServiceCheck{Type: "tcp"})
		}, "2 health checks: one per group is supported"},
		{"unknown config key", func(j *api.Job) { task(j).Config["volumes"] = []any{"/a:/b"} }, "task taewa: config.volumes is not supported"},
		{"network mode cni", func(j *api.Job) { group(j).Networks[0].Mode = "cni/mynet" }, `group taewa: network mode "cni/mynet" is not supported`},
		{"batch job", func(j *api.Job) { j.Type = tt.Ptr("batch") }, `job taewa-vertical: type "batch" is not supported`},
		{"periodic", func(j *api.Job) { j.Periodic = &api.PeriodicConfig{} }, "periodic is not supported"},
		{"entry unknown", func(j *api.Job) { j.Meta["orchbench_service"] = "nope" }, `meta orchbench_service names service "nope", which no group registers`},
		{"spread by rack", func(j *api.Job) { group(j).Spreads = []*api.Spread{{Attribute: "${meta.rack}"}} }, `spread over "${meta.rack}" is not supported`},
		{"interpolated image", func(j *api.Job) { task(j).Config["image"] = "orchbench/${NOMAD_META_x}" }, "interpolation in the image is not supported"},
		{"service name not a DNS name", func(j *api.Job) { group(j).Services[0].Name = "taewa.web" }, `Consul service name "taewa.web" is not a valid DNS name`},
		{"upper-case service name", func(j *api.Job) { group(j).Services[0].Name = "Taewa" }, `Consul service name "Taewa" is not a valid DNS name`},
		{"underscore in a group name", func(j *api.Job) { group(j).Name = tt.Ptr("tae_wa") }, `"taewa-vertical-tae_wa" is not a valid`},
		{"name longer than a DNS label", func(j *api.Job) { group(j).Name = tt.Ptr(strings.Repeat("g", 49)) }, `is not a valid`},
		{"job ID not a DNS label", func(j *api.Job) { j.ID = tt.Ptr("Taewa") }, `job Taewa: the job's ID is not a DNS label`},
	}
}

// TestTranslateRefusals: every stanza the adapter cannot honour is an error
// that names the target, the place and the stanza.
func TestTranslateRefusals(t *testing.T) {
	for _, c := range refusals() {
		j := tt.Taewa()
		c.mutate(j)
		_, err := Translate(j, opts(0))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "swarm: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant swarm: ...%s...", c.name, err, c.want)
		}
	}
}
