package pack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation"
)

// These tests pin packs/hotel-reservation's shape the harness relies on:
// one group per task, the variant ratios and counts (datastores never
// replicated), the memory floors, each service's upstreams and stores, and
// the probe meta against the real service's answers.

var (
	hotelServices   = []string{"frontend", "search", "geo", "rate", "profile", "recommendation", "user", "reservation"}
	hotelDatastores = []string{"ferretdb-geo", "ferretdb-profile", "ferretdb-rate", "ferretdb-recommendation",
		"ferretdb-reservation", "ferretdb-user", "memcached-profile", "memcached-rate", "memcached-reserve"}
)

func renderHotel(t *testing.T, overrides map[string]string) (dsbJob, error) {
	t.Helper()
	return renderDSB(t, "hotel-reservation", overrides)
}

func mustRenderHotel(t *testing.T, vars map[string]string) dsbJob {
	t.Helper()
	job, err := renderHotel(t, vars)
	if err != nil {
		t.Fatalf("render %v: %v", vars, err)
	}
	return job
}

func isHotelService(name string) bool { return slices.Contains(hotelServices, name) }

func TestHotelReservationBaselineShape(t *testing.T) {
	job := mustRenderHotel(t, map[string]string{"resource_scale": "0.5"})
	if job.name != "hotel-reservation-baseline" {
		t.Errorf("job name %q", job.name)
	}
	var groups []string
	for name := range job.tasks {
		groups = append(groups, name)
	}
	if want := append(slices.Clone(hotelServices), hotelDatastores...); !sameSet(groups, want) {
		t.Fatalf("groups %v, want the 8 services and the 9 datastores %v", groups, want)
	}
	fe := job.tasks["frontend"]
	if fe.cpu != 4000 || fe.memory != 2048 || fe.meta["orchbench_cores"] != "2" || fe.meta["orchbench_memory_mib"] != "2048" || !fe.hardLimit {
		t.Errorf("frontend at 0.5: 4 cores x 0.5 x 2000 MHz = 4000 MHz capped, 4096 x 0.5 = 2048 MiB; got %+v", fe)
	}
	if fe.serviceChecks != "http" || fe.serviceName != "hotel-reservation-baseline-frontend" || job.meta["orchbench_service"] != fe.serviceName {
		t.Errorf("frontend service %q (check %s), orchbench_service %q", fe.serviceName, fe.serviceChecks, job.meta["orchbench_service"])
	}
	if !slices.Equal(fe.args, []string{"--service", "frontend", "--listen-addr", `"${NOMAD_ADDR_http}"`}) {
		t.Errorf("frontend args %q", fe.args)
	}
	for _, name := range hotelServices[1:] {
		task := job.tasks[name]
		if task.cpu != 1000 || task.memory != 512 || !task.hardLimit || task.meta["orchbench_cores"] != "0.5" ||
			task.meta["orchbench_cpu_mode"] != "quota" || task.count != 1 || task.meta["orchbench_role"] != "service" {
			t.Errorf("%s at 0.5: want 1000 MHz, 512 MiB, a quota of 0.5 cores, one instance, role service; got %+v", name, task)
		}
		if task.serviceChecks != "tcp" || task.serviceName != "hotel-reservation-baseline-"+name {
			t.Errorf("%s: service %q check %q", name, task.serviceName, task.serviceChecks)
		}
		if !slices.Equal(task.args, []string{"--service", name, "--listen-addr", `"${NOMAD_ADDR_rpc}"`}) {
			t.Errorf("%s args %q", name, task.args)
		}
	}
	for _, name := range hotelServices {
		if task := job.tasks[name]; task.image != "orchbench/hotelres:local" || task.env["STORAGE"] != "external" {
			t.Errorf("%s: image %q, STORAGE %q", name, task.image, task.env["STORAGE"])
		}
	}
	for _, name := range hotelDatastores {
		task := job.tasks[name]
		if task.memory != 512 || task.hardLimit || task.meta["orchbench_cores"] != "0" || task.meta["orchbench_cpu_mode"] != "shares" ||
			task.meta["orchbench_role"] != "datastore" || task.cpu != 1000 || task.serviceChecks != "tcp" || task.hasTemplate {
			t.Errorf("%s: 1 core as CPU shares without a cap, 1 GiB x 0.5, a TCP check, no upstreams; got %+v", name, task)
		}
		args := strings.Join(task.args, " ")
		switch {
		case strings.HasPrefix(name, "ferretdb-"):
			if task.image != "orchbench/ferretdb:local" || args != `--listen-addr "${NOMAD_ADDR_rpc}" --data-dir /alloc/data/ferretdb` {
				t.Errorf("%s: image %q args %q", name, task.image, args)
			}
		default:
			// the items stay under the hard limit: 75 % of 512
			if task.image != "orchbench/memcached:local" || args != `-l "${NOMAD_IP_rpc}" -p "${NOMAD_PORT_rpc}" -U 0 -m 384` {
				t.Errorf("%s: image %q args %q", name, task.image, args)
			}
		}
	}
	if v := job.meta["orchbench_resource_scale"]; v != "0.5" {
		t.Errorf("orchbench_resource_scale %q", v)
	}
}

// The probe meta, checked against the real service: the hotels of the
// wrk2 script's first point pass it, an empty FeatureCollection (what a
// deployment without its data answers) fails both the size and the regex.
func TestHotelReservationProbeMeta(t *testing.T) {
	job := mustRenderHotel(t, map[string]string{})
	const path = "/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=37.7867&lon=-122.4112"
	for key, want := range map[string]string{
		"orchbench_app": "hotel-reservation", "orchbench_variant": "baseline", "orchbench_service": "hotel-reservation-baseline-frontend",
		"orchbench_probe_path": path, "orchbench_load_path": path, "orchbench_verify_timeout": "2m",
		"orchbench_probe_load_reference": "false",
		"orchbench_verify_args":          `["dsb","hotel-reservation","verify","--allow-remote","--frontend","http://{{endpoint}}"]`,
	} {
		if job.meta[key] != want {
			t.Errorf("meta %s = %q, want %q", key, job.meta[key], want)
		}
	}
	for _, key := range []string{"orchbench_setup_args", "orchbench_prepare_args"} {
		if v, ok := job.meta[key]; ok {
			t.Errorf("%s = %q: the services seed themselves, there is no such hook", key, v)
		}
	}
	minBytes, err := strconv.Atoi(job.meta["orchbench_probe_min_bytes"])
	if err != nil {
		t.Fatalf("orchbench_probe_min_bytes %q", job.meta["orchbench_probe_min_bytes"])
	}
	re, err := regexp.Compile(job.meta["orchbench_probe_regex"])
	if err != nil {
		t.Fatalf("orchbench_probe_regex %q: %v", job.meta["orchbench_probe_regex"], err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	running, err := hotelreservation.Start(ctx, hotelreservation.ServiceNames(),
		map[string]string{hotelreservation.ServiceFrontend: "127.0.0.1:0"},
		hotelreservation.Settings{StorageMode: "memory", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Stop()
	get := func(path string) string {
		resp, err := http.Get("http://" + running.Addrs[hotelreservation.ServiceFrontend] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, resp.Status, body)
		}
		return string(body)
	}
	hotels := get(path)
	if len(hotels) < minBytes || !re.MatchString(hotels) || strings.Count(hotels, `"type":"Feature"`) != 3 {
		t.Errorf("the seeded answer (%d bytes, min %d) fails the probe or is not three hotels:\n%s", len(hotels), minBytes, hotels)
	}
	// far from every hotel: what a deployment that lost its data answers
	empty := get("/hotels?inDate=2015-04-09&outDate=2015-04-10&lat=0&lon=0")
	if !strings.HasPrefix(empty, `{"features":[],`) {
		t.Fatalf("expected an empty FeatureCollection, got %s", empty)
	}
	if len(empty) >= minBytes || re.MatchString(empty) {
		t.Errorf("an empty answer (%d bytes) passes the probe (min %d, regex %s)", len(empty), minBytes, re)
	}
}

func TestHotelReservationVariants(t *testing.T) {
	vars := func(kv ...string) map[string]string {
		m := map[string]string{"resource_scale": "0.25"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	base := mustRenderHotel(t, vars())
	vert := mustRenderHotel(t, vars("variant", "vertical"))
	horiz := mustRenderHotel(t, vars("variant", "horizontal"))
	horiz3 := mustRenderHotel(t, vars("variant", "horizontal", "scale", "3"))
	ha := mustRenderHotel(t, vars("variant", "ha"))
	unl := mustRenderHotel(t, vars("variant", "unlimited"))
	scaled := mustRenderHotel(t, vars("scale", "2"))
	for name, b := range base.tasks {
		stateless := isHotelService(name)
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
		for _, name := range hotelServices {
			want := map[bool]int64{true: c.front, false: c.other}[name == "frontend"]
			if got := c.job.tasks[name].cpu; got != want {
				t.Errorf("%s %s: %d MHz, want %d", c.job.name, name, got, want)
			}
		}
	}
	if vert.name != "hotel-reservation-vertical" || vert.meta["orchbench_variant"] != "vertical" || ha.meta["orchbench_count"] != "2" {
		t.Errorf("vertical job %q meta %q; ha frontend count meta %q", vert.name, vert.meta["orchbench_variant"], ha.meta["orchbench_count"])
	}
	// the cores each task's meta declares follow resource_scale
	half := mustRenderHotel(t, map[string]string{"resource_scale": "0.5", "variant": "vertical"})
	if fe := half.tasks["frontend"]; fe.meta["orchbench_cores"] != "4" || fe.cpu != 8000 || fe.memory != 4096 {
		t.Errorf("vertical frontend at 0.5: 8 x 0.5 = 4 cores, 8000 MHz, 4096 MiB; got %+v", fe)
	}
}

// A miniature keeps its memory: at resource_scale 0.03 the declared 1 GiB
// would be 31 MiB, which no task is left with.
func TestHotelReservationMemoryFloors(t *testing.T) {
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
		job := mustRenderHotel(t, c.vars)
		for name, task := range job.tasks {
			want := c.store
			switch {
			case name == "frontend":
				want = c.frontend
			case isHotelService(name):
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
		if got := job.tasks["geo"].cpu; got != c.cpuMHz {
			t.Errorf("%v: geo %d MHz, want %d", c.vars, got, c.cpuMHz)
		}
	}
}

// Each service's upstreams template names exactly the services it calls
// and its own stores: its own FerretDB, and for profile, rate and
// reservation its own memcached.
func TestHotelReservationUpstreams(t *testing.T) {
	job := mustRenderHotel(t, map[string]string{"variant": "horizontal", "job_name": "hr"})
	want := map[string]map[string]string{
		"frontend": {"SEARCH_ADDR": "hr-search", "PROFILE_ADDR": "hr-profile", "RECOMMENDATION_ADDR": "hr-recommendation",
			"USER_ADDR": "hr-user", "RESERVATION_ADDR": "hr-reservation"},
		"search":         {"GEO_ADDR": "hr-geo", "RATE_ADDR": "hr-rate"},
		"geo":            {"MONGODB_URI": "hr-ferretdb-geo"},
		"rate":           {"MONGODB_URI": "hr-ferretdb-rate", "MEMCACHED_ADDR": "hr-memcached-rate"},
		"profile":        {"MONGODB_URI": "hr-ferretdb-profile", "MEMCACHED_ADDR": "hr-memcached-profile"},
		"recommendation": {"MONGODB_URI": "hr-ferretdb-recommendation"},
		"user":           {"MONGODB_URI": "hr-ferretdb-user"},
		"reservation":    {"MONGODB_URI": "hr-ferretdb-reservation", "MEMCACHED_ADDR": "hr-memcached-reserve"},
	}
	lookup := regexp.MustCompile(`service "([^"|]+)\|any"`)
	instances := []consulInstance{
		instance("10.0.0.21", 2001, "passing", "critical"),
		instance("10.0.0.22", 2002, "critical", "passing"), // on a failed node
		instance("10.0.0.23", 2003, "passing", "passing"),
	}
	for _, name := range hotelServices {
		task := job.tasks[name]
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(task.templateData), "\n") {
			key, text, _ := strings.Cut(line, "=")
			if key == "UPSTREAMS_FILE" {
				if text != "/local/upstreams.env" {
					t.Errorf("%s: UPSTREAMS_FILE=%s", name, text)
				}
				continue
			}
			names := lookup.FindAllStringSubmatch(text, -1)
			if len(names) != 1 {
				t.Errorf("%s: %s looks up %d services: %s", name, key, len(names), text)
				continue
			}
			got[key] = names[0][1]
			// rendered as consul-template would: every instance but the
			// failed node's, and the first of them for a store's URI
			tmpl, err := template.New(key).Funcs(template.FuncMap{
				"service": func(string) []consulInstance { return instances },
			}).Parse(text)
			if err != nil {
				t.Fatalf("%s %s: %v", name, key, err)
			}
			var out strings.Builder
			if err := tmpl.Execute(&out, nil); err != nil {
				t.Fatalf("%s %s: %v", name, key, err)
			}
			rendered := "10.0.0.21:2001,10.0.0.23:2003"
			if key == "MONGODB_URI" {
				rendered = "mongodb://10.0.0.21:2001/"
			}
			if out.String() != rendered {
				t.Errorf("%s: %s=%s, want %s", name, key, out.String(), rendered)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want[name]) {
			t.Errorf("%s looks up %v, want %v", name, got, want[name])
		}
		if task.env["GRPC_CHANNELS"] != map[bool]string{true: "4", false: ""}[len(hotelreservation.Upstreams[name]) > 0] {
			t.Errorf("%s GRPC_CHANNELS %q", name, task.env["GRPC_CHANNELS"])
		}
	}
	// the pack's table is the port's own
	for name, ups := range hotelreservation.Upstreams {
		var addrs []string
		for _, up := range ups {
			addrs = append(addrs, hotelreservation.AddrEnv(up))
		}
		for _, store := range hotelreservation.Storage[name] {
			addrs = append(addrs, map[string]string{"mongodb": "MONGODB_URI", "memcached": "MEMCACHED_ADDR"}[store])
		}
		var keys []string
		for key := range want[name] {
			keys = append(keys, key)
		}
		if !sameSet(addrs, keys) {
			t.Errorf("%s: the port calls and stores %v, the pack wires %v", name, addrs, keys)
		}
	}
}

func TestHotelReservationOptions(t *testing.T) {
	job := mustRenderHotel(t, map[string]string{
		"resource_scale": "0.5", "datastore_cpu_limit": "true", "go_maxprocs": "3", "call_timeout": "1m",
		"grpc_channels": "8", "pool_size": "16", "image_tag": "abc", "resources": `{ ferretdb-rate = { cores = 2, memory_mib = 4096 } }`,
	})
	if f := job.tasks["ferretdb-rate"]; f.cpu != 2000 || f.memory != 2048 || !f.hardLimit || f.meta["orchbench_cores"] != "1" || f.image != "orchbench/ferretdb:abc" {
		t.Errorf("ferretdb-rate override 2 cores / 4096 MiB at 0.5, capped: %+v", f)
	}
	if m := job.tasks["memcached-rate"]; !m.hardLimit || m.meta["orchbench_cpu_mode"] != "quota" || m.image != "orchbench/memcached:abc" {
		t.Errorf("datastore_cpu_limit caps memcached: %+v", m)
	}
	fe := job.tasks["frontend"]
	if fe.env["CALL_TIMEOUT"] != "1m" || fe.env["GRPC_CHANNELS"] != "8" || fe.env["GOMAXPROCS"] != "3" || fe.image != "orchbench/hotelres:abc" {
		t.Errorf("frontend env %v image %q", fe.env, fe.image)
	}
	if r := job.tasks["rate"]; r.env["POOL_SIZE"] != "16" || r.env["GOMAXPROCS"] != "3" {
		t.Errorf("rate env %v", r.env)
	}
	if _, ok := job.tasks["memcached-rate"].env["GOMAXPROCS"]; ok {
		t.Error("memcached is no Go program, yet has GOMAXPROCS")
	}
	// go_maxprocs 0: one processor for a Go task declared a core or less
	small := mustRenderHotel(t, map[string]string{"resource_scale": "0.03"})
	full := mustRenderHotel(t, map[string]string{})
	for _, name := range append(slices.Clone(hotelServices), "ferretdb-geo") {
		if got := small.tasks[name].env["GOMAXPROCS"]; got != "1" {
			t.Errorf("%s at 0.03: GOMAXPROCS %q, want 1", name, got)
		}
	}
	if got := full.tasks["frontend"].env["GOMAXPROCS"]; got != "" {
		t.Errorf("the 4-core frontend at full scale: GOMAXPROCS %q, want Go's own", got)
	}
	named := mustRenderHotel(t, map[string]string{"job_name": "hr"})
	if named.name != "hr" || named.meta["orchbench_service"] != "hr-frontend" || named.tasks["geo"].serviceName != "hr-geo" {
		t.Errorf("job %q service %q", named.name, named.meta["orchbench_service"])
	}
}

func TestHotelReservationRejectsBadValues(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"variant": "sideways"}, `unknown variant "sideways"; valid variants are: baseline, vertical, horizontal, ha, unlimited`},
		{map[string]string{"scale": "-2"}, "scale must be a whole number"},
		{map[string]string{"scale": "1.5"}, "scale must be a whole number"},
		{map[string]string{"resource_scale": "0"}, "resource_scale must be > 0"},
		{map[string]string{"resource_scale": "-0.5"}, "resource_scale must be > 0"},
		{map[string]string{"mhz_per_core": "0"}, "mhz_per_core must be > 0"},
		{map[string]string{"resource_scale": "0.001", "service_memory_mib": "0"}, "Nomad needs at least 10"},
		{map[string]string{"service_memory_mib": "-1"}, "service_memory_mib must be a whole number of MiB"},
		{map[string]string{"datastore_memory_mib": "1.5"}, "datastore_memory_mib must be a whole number of MiB"},
		{map[string]string{"go_maxprocs": "-2"}, "go_maxprocs must be -1 (Go's default), 0"},
		{map[string]string{"grpc_channels": "0"}, "grpc_channels must be a whole number >= 1"},
		{map[string]string{"pool_size": "2.5"}, "pool_size must be a whole number >= 1"},
		{map[string]string{"call_timeout": "30"}, `call_timeout must be a positive Go duration such as 30s or 1m30s, got "30"`},
		{map[string]string{"call_timeout": "0s"}, "call_timeout must be a positive Go duration"},
		{map[string]string{"resources": "{ redis = { cores = 1, memory_mib = 1 } }"}, `resources names unknown group "redis"`},
	} {
		_, err := renderHotel(t, c.vars)
		if err == nil {
			t.Errorf("%v rendered", c.vars)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %q lacks %q", c.vars, err, c.want)
		}
	}
}

func TestHotelReservationVariablesDocumented(t *testing.T) {
	dir, _ := Find("hotel-reservation")
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Variables["variant"].Description; !strings.HasSuffix(d, "One of: baseline, vertical, horizontal, ha, unlimited.") {
		t.Errorf("variant description must end with the variant list: %q", d)
	}
	for _, name := range p.VariableNames() {
		v := p.Variables[name]
		if strings.TrimSpace(v.Description) == "" || v.Type.Equals(cty.DynamicPseudoType) {
			t.Errorf("variable %s: description %q, type %s", name, v.Description, v.Type.FriendlyName())
		}
	}
	for _, name := range []string{"service_memory_mib", "datastore_memory_mib"} {
		if def := p.Variables[name].Default; def.Type() != cty.Number || !def.Equals(cty.NumberIntVal(256)).True() {
			t.Errorf("%s defaults to %#v, want 256", name, def)
		}
	}
}
