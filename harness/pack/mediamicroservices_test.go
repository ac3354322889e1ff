package pack

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// These tests pin packs/media-microservices' shape the harness relies on:
// one group per task, the variant ratios and counts (datastores never
// replicated), the memory floors, each service's upstreams and stores
// (mediamicroservices_wiring_test.go) and the meta.

var (
	mediaServices = []string{"frontend", "unique-id", "movie-id", "text", "rating", "user", "compose-review",
		"review-storage", "user-review", "movie-review", "cast-info", "plot", "movie-info", "page"}
	mediaDatastores = []string{"mongodb-movie-id", "memcached-movie-id", "redis-rating", "mongodb-user", "memcached-user",
		"memcached-compose-review", "mongodb-review-storage", "memcached-review-storage", "mongodb-user-review",
		"redis-user-review", "mongodb-movie-review", "redis-movie-review", "mongodb-cast-info", "memcached-cast-info",
		"mongodb-plot", "memcached-plot", "mongodb-movie-info", "memcached-movie-info"}
)

func renderMedia(t *testing.T, overrides map[string]string) (dsbJob, error) {
	t.Helper()
	return renderDSB(t, "media-microservices", overrides)
}

func mustRenderMedia(t *testing.T, vars map[string]string) dsbJob {
	t.Helper()
	job, err := renderMedia(t, vars)
	if err != nil {
		t.Fatalf("render %v: %v", vars, err)
	}
	return job
}

func isMediaService(name string) bool { return slices.Contains(mediaServices, name) }

func TestMediaMicroservicesBaselineShape(t *testing.T) {
	job := mustRenderMedia(t, map[string]string{"resource_scale": "0.5"})
	if job.name != "media-microservices-baseline" {
		t.Errorf("job name %q", job.name)
	}
	var groups []string
	for name := range job.tasks {
		groups = append(groups, name)
	}
	if want := append(slices.Clone(mediaServices), mediaDatastores...); !sameSet(groups, want) {
		t.Fatalf("groups %v, want the 14 services and the 18 datastores %v", groups, want)
	}
	fe := job.tasks["frontend"]
	if fe.cpu != 4000 || fe.memory != 2048 || fe.meta["orchbench_cores"] != "2" || fe.meta["orchbench_memory_mib"] != "2048" || !fe.hardLimit {
		t.Errorf("frontend at 0.5: 4 cores x 0.5 x 2000 MHz = 4000 MHz capped, 4096 x 0.5 = 2048 MiB; got %+v", fe)
	}
	if fe.serviceChecks != "http" || fe.serviceName != "media-microservices-baseline-frontend" || job.meta["orchbench_service"] != fe.serviceName {
		t.Errorf("frontend service %q (check %s), orchbench_service %q", fe.serviceName, fe.serviceChecks, job.meta["orchbench_service"])
	}
	if !slices.Equal(fe.args, []string{"--service", "frontend", "--listen-addr", `"${NOMAD_ADDR_http}"`}) {
		t.Errorf("frontend args %q", fe.args)
	}
	for _, name := range mediaServices {
		task := job.tasks[name]
		if task.image != "orchbench/mediamicro:local" || task.env["STORAGE"] != "external" || task.disk != 0 {
			t.Errorf("%s: image %q, STORAGE %q, ephemeral disk %d", name, task.image, task.env["STORAGE"], task.disk)
		}
		if name == "frontend" {
			continue
		}
		if task.cpu != 1000 || task.memory != 512 || !task.hardLimit || task.meta["orchbench_cores"] != "0.5" ||
			task.meta["orchbench_cpu_mode"] != "quota" || task.count != 1 || task.meta["orchbench_role"] != "service" {
			t.Errorf("%s at 0.5: want 1000 MHz, 512 MiB, a quota of 0.5 cores, one instance, role service; got %+v", name, task)
		}
		if task.serviceChecks != "tcp" || task.serviceName != "media-microservices-baseline-"+name {
			t.Errorf("%s: service %q check %q", name, task.serviceName, task.serviceChecks)
		}
		if !slices.Equal(task.args, []string{"--service", name, "--listen-addr", `"${NOMAD_ADDR_rpc}"`}) {
			t.Errorf("%s args %q", name, task.args)
		}
	}
	growing := []string{"mongodb-review-storage", "mongodb-user-review", "mongodb-movie-review", "redis-user-review", "redis-movie-review"}
	for _, name := range mediaDatastores {
		task := job.tasks[name]
		if task.memory != 512 || task.hardLimit || task.meta["orchbench_cores"] != "0" || task.meta["orchbench_cpu_mode"] != "shares" ||
			task.meta["orchbench_role"] != "datastore" || task.cpu != 1000 || task.serviceChecks != "tcp" || task.hasTemplate ||
			task.serviceName != "media-microservices-baseline-"+name {
			t.Errorf("%s: 1 core as CPU shares without a cap, 1 GiB x 0.5, a TCP check, no upstreams; got %+v", name, task)
		}
		// the stores' files live in the alloc dir; the ones every compose
		// adds to get room for a sweep's reviews
		disk := map[bool]int64{true: 1024, false: 300}[slices.Contains(growing, name)]
		args := strings.Join(task.args, " ")
		switch {
		case strings.HasPrefix(name, "mongodb-"):
			if task.image != "orchbench/ferretdb:local" || args != `--listen-addr "${NOMAD_ADDR_rpc}" --data-dir /alloc/data/ferretdb` || task.disk != disk {
				t.Errorf("%s: image %q args %q disk %d", name, task.image, args, task.disk)
			}
		case strings.HasPrefix(name, "redis-"):
			// durable, and full rather than evicting: 75 % of 512
			want := `--bind "${NOMAD_IP_rpc}" --port "${NOMAD_PORT_rpc}" --dir /alloc/data/redis --appendonly yes --appendfsync everysec --maxmemory 384mb --maxmemory-policy noeviction`
			if task.image != "orchbench/redis:local" || args != want || task.disk != disk {
				t.Errorf("%s: image %q args %q disk %d", name, task.image, args, task.disk)
			}
		default:
			// the items stay under the hard limit: 75 % of 512
			if task.image != "orchbench/memcached:local" || args != `-l "${NOMAD_IP_rpc}" -p "${NOMAD_PORT_rpc}" -U 0 -m 384` || task.disk != 0 {
				t.Errorf("%s: image %q args %q disk %d", name, task.image, args, task.disk)
			}
		}
	}
	if v := job.meta["orchbench_resource_scale"]; v != "0.5" {
		t.Errorf("orchbench_resource_scale %q", v)
	}
}

func TestMediaMicroservicesVariants(t *testing.T) {
	vars := func(kv ...string) map[string]string {
		m := map[string]string{"resource_scale": "0.25"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	base := mustRenderMedia(t, vars())
	vert := mustRenderMedia(t, vars("variant", "vertical"))
	horiz := mustRenderMedia(t, vars("variant", "horizontal"))
	horiz3 := mustRenderMedia(t, vars("variant", "horizontal", "scale", "3"))
	ha := mustRenderMedia(t, vars("variant", "ha"))
	unl := mustRenderMedia(t, vars("variant", "unlimited"))
	scaled := mustRenderMedia(t, vars("scale", "2"))
	for name, b := range base.tasks {
		stateless := isMediaService(name)
		want := map[bool]int64{true: 2, false: 1}[stateless]
		if b.count != 1 || vert.tasks[name].count != 1 || unl.tasks[name].count != 1 {
			t.Errorf("%s: baseline, vertical and unlimited run one instance: %d, %d, %d", name, b.count, vert.tasks[name].count, unl.tasks[name].count)
		}
		if h := horiz.tasks[name]; h.count != want || h.cpu != b.cpu || h.memory != b.memory {
			t.Errorf("%s horizontal: %d instances of baseline size, want %d; got %+v (baseline %+v)", name, h.count, want, h, b)
		}
		if h := ha.tasks[name]; h.count != want || !h.spread {
			t.Errorf("%s ha: %d instances spread over nodes, want %d; got count %d spread %v", name, want, want, h.count, h.spread)
		}
		if b.spread || horiz.tasks[name].spread {
			t.Errorf("%s: only ha spreads", name)
		}
		if want3 := map[bool]int64{true: 3, false: 1}[stateless]; horiz3.tasks[name].count != want3 {
			t.Errorf("%s horizontal with scale=3: %d instances, want %d", name, horiz3.tasks[name].count, want3)
		}
		if s := scaled.tasks[name]; s.count != want || s.cpu != b.cpu {
			t.Errorf("%s baseline with scale=2: %+v, want %d instances of baseline size", name, s, want)
		}
		if v := vert.tasks[name]; v.cpu != 2*b.cpu || v.memory != 2*b.memory || v.hardLimit != b.hardLimit {
			t.Errorf("%s vertical %+v is not twice baseline %+v", name, v, b)
		}
		if u := unl.tasks[name]; u.cpu != b.cpu || u.memory != b.memory || u.hardLimit || u.meta["orchbench_cores"] != "0" || u.meta["orchbench_cpu_mode"] != "shares" {
			t.Errorf("%s unlimited should reserve baseline with no CPU cap: %+v", name, u)
		}
	}
	// the declared cores per variant at resource_scale 0.25 and 2000 MHz a core
	for _, c := range []struct {
		job          dsbJob
		front, other int64
	}{{base, 2000, 500}, {vert, 4000, 1000}, {horiz, 2000, 500}} {
		for _, name := range mediaServices {
			want := map[bool]int64{true: c.front, false: c.other}[name == "frontend"]
			if got := c.job.tasks[name].cpu; got != want {
				t.Errorf("%s %s: %d MHz, want %d", c.job.name, name, got, want)
			}
		}
	}
	if vert.name != "media-microservices-vertical" || vert.meta["orchbench_variant"] != "vertical" || ha.meta["orchbench_count"] != "2" {
		t.Errorf("vertical job %q meta %q; ha frontend count meta %q", vert.name, vert.meta["orchbench_variant"], ha.meta["orchbench_count"])
	}
}

// A miniature keeps its memory: at resource_scale 0.03 the declared 1 GiB
// would be 31 MiB, which no task is left with.
func TestMediaMicroservicesMemoryFloors(t *testing.T) {
	for _, c := range []struct {
		vars             map[string]string
		service, store   int64
		frontend, cpuMHz int64
	}{
		{map[string]string{"resource_scale": "0.03"}, 256, 256, 256, 60},
		{map[string]string{"resource_scale": "0.03", "variant": "vertical"}, 512, 512, 512, 120},
		{map[string]string{"resource_scale": "0.03", "variant": "horizontal"}, 256, 256, 256, 60},
		{map[string]string{"resource_scale": "0.03", "service_memory_mib": "384", "datastore_memory_mib": "1024"}, 384, 1024, 384, 60},
		{map[string]string{"resource_scale": "0.03", "service_memory_mib": "0", "datastore_memory_mib": "0"}, 31, 31, 123, 60},
		{map[string]string{"resource_scale": "0.5"}, 512, 512, 2048, 1000},
	} {
		job := mustRenderMedia(t, c.vars)
		for name, task := range job.tasks {
			want := c.store
			switch {
			case name == "frontend":
				want = c.frontend
			case isMediaService(name):
				want = c.service
			}
			if task.memory != want || task.meta["orchbench_memory_mib"] != strconv.FormatInt(want, 10) {
				t.Errorf("%v: %s %d MiB (meta %s), want %d", c.vars, name, task.memory, task.meta["orchbench_memory_mib"], want)
			}
			if gomem := task.env["GOMEMLIMIT"]; gomem != fmt.Sprintf("%dMiB", want*85/100) {
				t.Errorf("%v: %s GOMEMLIMIT %q, want 85 %% of %d MiB", c.vars, name, gomem, want)
			}
		}
		// the floors hold memory, not CPU: that still follows resource_scale
		if got := job.tasks["page"].cpu; got != c.cpuMHz {
			t.Errorf("%v: page %d MHz, want %d", c.vars, got, c.cpuMHz)
		}
	}
}

func TestMediaMicroservicesRejectsBadValues(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"variant": "sideways"}, `unknown variant "sideways"; valid variants are: baseline, vertical, horizontal, ha, unlimited`},
		{map[string]string{"scale": "-2"}, "scale must be a whole number"},
		{map[string]string{"scale": "1.5"}, "scale must be a whole number"},
		{map[string]string{"resource_scale": "0"}, "resource_scale must be > 0"},
		{map[string]string{"mhz_per_core": "0"}, "mhz_per_core must be > 0"},
		{map[string]string{"resource_scale": "0.001", "service_memory_mib": "0"}, "Nomad needs at least 10"},
		{map[string]string{"service_memory_mib": "-1"}, "service_memory_mib must be a whole number of MiB"},
		{map[string]string{"datastore_memory_mib": "1.5"}, "datastore_memory_mib must be a whole number of MiB"},
		{map[string]string{"go_maxprocs": "-2"}, "go_maxprocs must be -1 (Go's default), 0"},
		{map[string]string{"rpc_connections": "0"}, "rpc_connections must be a whole number >= 1"},
		{map[string]string{"pool_size": "2.5"}, "pool_size must be a whole number >= 1"},
		{map[string]string{"call_timeout": "30"}, `call_timeout must be a positive Go duration such as 30s or 1m30s, got "30"`},
		{map[string]string{"call_timeout": "0s"}, "call_timeout must be a positive Go duration"},
		{map[string]string{"machine_id": "random"}, `machine_id must be "index"`},
		{map[string]string{"resources": "{ ferretdb-plot = { cores = 1, memory_mib = 1 } }"}, `resources names unknown group "ferretdb-plot"`},
	} {
		_, err := renderMedia(t, c.vars)
		if err == nil {
			t.Errorf("%v rendered", c.vars)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %q lacks %q", c.vars, err, c.want)
		}
	}
}

// Every variable is described, in variables.hcl and in the README's
// table, and the resources variable names exactly the groups it accepts.
func TestMediaMicroservicesVariablesDocumented(t *testing.T) {
	dir, _ := Find("media-microservices")
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Variables["variant"].Description; !strings.HasSuffix(d, "One of: baseline, vertical, horizontal, ha, unlimited.") {
		t.Errorf("variant description must end with the variant list: %q", d)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range p.VariableNames() {
		v := p.Variables[name]
		if strings.TrimSpace(v.Description) == "" || v.Type.Equals(cty.DynamicPseudoType) {
			t.Errorf("variable %s: description %q, type %s", name, v.Description, v.Type.FriendlyName())
		}
		if !strings.Contains(string(readme), "| `"+name+"` |") {
			t.Errorf("variable %s has no row in the README's table", name)
		}
	}
	for _, name := range []string{"service_memory_mib", "datastore_memory_mib"} {
		if def := p.Variables[name].Default; def.Type() != cty.Number || !def.Equals(cty.NumberIntVal(256)).True() {
			t.Errorf("%s defaults to %#v, want 256", name, def)
		}
	}
	d := p.Variables["resources"].Description
	_, keys, _ := strings.Cut(d, "Keys: ")
	if got := strings.Split(strings.TrimSuffix(keys, "."), ", "); !sameSet(got, append(slices.Clone(mediaServices), mediaDatastores...)) {
		t.Errorf("the resources description lists %v", got)
	}
	for _, name := range append(slices.Clone(mediaServices), mediaDatastores...) {
		if _, err := renderMedia(t, map[string]string{"resources": "{ " + name + " = { cores = 2, memory_mib = 2048 } }"}); err != nil {
			t.Errorf("resources override of %s: %v", name, err)
		}
	}
}
