package pack

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// These tests pin packs/social-network's shape the harness relies on: one
// group per task, the variant ratios and counts, and the meta.

var socialServices = []string{"frontend", "compose-post", "text", "url-shorten", "user-mention", "media",
	"unique-id", "user", "social-graph", "post-storage", "user-timeline", "home-timeline"}

type socialTask struct {
	count         int64
	cpu, memory   int64
	meta          map[string]string
	hardLimit     bool
	hasTemplate   bool
	templateData  string
	args          []string
	serviceName   string
	serviceChecks string
	env           map[string]string
	// envSource is every env value's source text, interpolations too
	envSource map[string]string
}

type socialJob struct {
	name  string
	meta  map[string]string
	tasks map[string]socialTask
}

func renderSocial(t *testing.T, overrides map[string]string) (socialJob, error) {
	t.Helper()
	job, text, err := renderedJob(t, "social-network", overrides)
	if err != nil {
		return socialJob{}, err
	}
	out := socialJob{name: job.Labels[0], meta: literalStrings(t, only(t, job.Body, "meta").Body), tasks: map[string]socialTask{}}
	for _, group := range job.Body.Blocks {
		if group.Type != "group" {
			continue
		}
		task := only(t, group.Body, "task")
		if task.Labels[0] != group.Labels[0] {
			t.Errorf("group %s holds task %s", group.Labels[0], task.Labels[0])
		}
		res := only(t, task.Body, "resources").Body
		st := socialTask{
			count:  intAttr(t, group.Body, "count"),
			cpu:    intAttr(t, res, "cpu"),
			memory: intAttr(t, res, "memory"),
			meta:   literalStrings(t, only(t, task.Body, "meta").Body),
		}
		config := only(t, task.Body, "config").Body
		if v, diags := config.Attributes["cpu_hard_limit"].Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.Bool {
			st.hardLimit = v.True()
		}
		if attr, ok := config.Attributes["args"]; ok {
			st.args = argWords(t, text, attr.Expr)
		}
		for _, b := range task.Body.Blocks {
			if b.Type == "env" {
				st.env = literalEnv(t, b.Body)
				st.envSource = map[string]string{}
				for name, attr := range b.Body.Attributes {
					r := attr.Expr.Range()
					st.envSource[name] = string(r.SliceBytes([]byte(text)))
				}
			}
			if b.Type == "template" {
				st.hasTemplate = true
				v, _ := b.Body.Attributes["data"].Expr.Value(nil)
				st.templateData = v.AsString()
			}
		}
		svc := only(t, group.Body, "service")
		name, _ := svc.Body.Attributes["name"].Expr.Value(nil)
		st.serviceName = name.AsString()
		check, _ := only(t, svc.Body, "check").Body.Attributes["type"].Expr.Value(nil)
		st.serviceChecks = check.AsString()
		out.tasks[group.Labels[0]] = st
	}
	return out, nil
}

// argWords lists a task's args, each literal by its value and each with
// Nomad's ${...} interpolation by its source text.
func argWords(t *testing.T, src string, expr hclsyntax.Expression) []string {
	t.Helper()
	tuple, ok := expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		t.Fatalf("args is not a list: %T", expr)
	}
	var words []string
	for _, e := range tuple.Exprs {
		if v, diags := e.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
			words = append(words, v.AsString())
			continue
		}
		r := e.Range()
		words = append(words, src[r.Start.Byte:r.End.Byte])
	}
	return words
}

func literalStrings(t *testing.T, body *hclsyntax.Body) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, attr := range body.Attributes {
		v, diags := attr.Expr.Value(nil)
		if diags.HasErrors() || v.Type() != cty.String {
			t.Fatalf("meta %s is not a literal string: %s", name, diags)
		}
		out[name] = v.AsString()
	}
	return out
}

func mustRenderSocial(t *testing.T, vars map[string]string) socialJob {
	t.Helper()
	job, err := renderSocial(t, vars)
	if err != nil {
		t.Fatalf("render %v: %v", vars, err)
	}
	return job
}

func TestSocialNetworkBaselineShapeAndMeta(t *testing.T) {
	job := mustRenderSocial(t, map[string]string{"resource_scale": "0.5"})
	if job.name != "social-network-baseline" {
		t.Errorf("job name %q", job.name)
	}
	if len(job.tasks) != 15 {
		t.Errorf("want 12 services + ferretdb, redis, memcached, got %d groups", len(job.tasks))
	}
	fe := job.tasks["frontend"]
	if fe.cpu != 4000 || fe.memory != 2048 || fe.meta["orchbench_cores"] != "2" || fe.meta["orchbench_memory_mib"] != "2048" {
		t.Errorf("frontend at 0.5: 4 cores x 0.5 x 2000 MHz = 4000 MHz, 2048 MiB; got %+v", fe)
	}
	for _, name := range socialServices[1:] {
		task := job.tasks[name]
		if task.cpu != 1000 || task.memory != 512 || !task.hardLimit || task.meta["orchbench_cores"] != "0.5" || task.count != 1 {
			t.Errorf("%s at 0.5: want 1000 MHz, 512 MiB, hard limit, cores 0.5, one instance; got %+v", name, task)
		}
		if task.meta["orchbench_role"] != "service" {
			t.Errorf("%s: role %q, want service (only the stores are datastores)", name, task.meta["orchbench_role"])
		}
		if task.serviceChecks != "tcp" || task.serviceName != "social-network-baseline-"+name {
			t.Errorf("%s: service %q check %q", name, task.serviceName, task.serviceChecks)
		}
	}
	if fe.serviceChecks != "http" || job.meta["orchbench_service"] != fe.serviceName {
		t.Errorf("frontend service %q (check %s), orchbench_service %q", fe.serviceName, fe.serviceChecks, job.meta["orchbench_service"])
	}
	for _, store := range []string{"ferretdb", "redis", "memcached"} {
		task := job.tasks[store]
		if task.memory != 2048 || task.hardLimit || task.meta["orchbench_cores"] != "0" || task.meta["orchbench_cpu_mode"] != "shares" || task.meta["orchbench_role"] != "datastore" {
			t.Errorf("%s: 4 GiB x 0.5 and CPU shares without a cap by default; got %+v", store, task)
		}
	}
	for key, want := range map[string]string{
		"orchbench_app": "social-network", "orchbench_variant": "baseline", "orchbench_resource_scale": "0.5",
	} {
		if job.meta[key] != want {
			t.Errorf("meta %s = %q, want %q", key, job.meta[key], want)
		}
	}
	if !strings.HasPrefix(job.meta["orchbench_probe_path"], "/wrk2-api/home-timeline/read?") || job.meta["orchbench_probe_min_bytes"] == "" {
		t.Errorf("probe %q min %q", job.meta["orchbench_probe_path"], job.meta["orchbench_probe_min_bytes"])
	}
	if data := job.tasks["compose-post"].templateData; !strings.Contains(data, `service "social-network-baseline-unique-id|any"`) || !strings.Contains(data, "HOME_TIMELINE_ADDR=") {
		t.Errorf("compose-post upstream template:\n%s", data)
	}
	if job.tasks["unique-id"].hasTemplate {
		t.Error("unique-id has no upstreams and needs no template")
	}
}

func TestSocialNetworkVariants(t *testing.T) {
	base := mustRenderSocial(t, map[string]string{"resource_scale": "0.25"})
	vert := mustRenderSocial(t, map[string]string{"variant": "vertical", "resource_scale": "0.25"})
	horiz := mustRenderSocial(t, map[string]string{"variant": "horizontal", "scale": "3", "datastore_scale": "2", "resource_scale": "0.25"})
	ha := mustRenderSocial(t, map[string]string{"variant": "ha", "resource_scale": "0.25"})
	unl := mustRenderSocial(t, map[string]string{"variant": "unlimited", "resource_scale": "0.25"})
	// `nomad-pack run social-network --var scale=2`: the default variant
	// with two instances of every stateless service.
	scaled := mustRenderSocial(t, map[string]string{"scale": "2", "resource_scale": "0.25"})
	for name, b := range base.tasks {
		s, stateless := scaled.tasks[name], name != "ferretdb" && name != "redis" && name != "memcached"
		if stateless && (s.count != 2 || s.cpu != b.cpu) || !stateless && s.count != 1 {
			t.Errorf("%s baseline with scale=2: %+v (baseline %+v)", name, s, b)
		}
		if b.count != 1 {
			t.Errorf("%s baseline without scale has count %d", name, b.count)
		}
		v, h := vert.tasks[name], horiz.tasks[name]
		if v.cpu != 2*b.cpu || v.memory != 2*b.memory || v.count != 1 {
			t.Errorf("%s vertical %+v is not twice baseline %+v", name, v, b)
		}
		if h.cpu != b.cpu || h.memory != b.memory {
			t.Errorf("%s horizontal %+v has not baseline resources %+v", name, h, b)
		}
		wantCount := int64(1)
		switch {
		case name == "memcached":
			wantCount = 2
		case name != "ferretdb" && name != "redis":
			wantCount = 3
		}
		if h.count != wantCount {
			t.Errorf("%s horizontal count %d, want %d", name, h.count, wantCount)
		}
		if name != "ferretdb" && name != "redis" && name != "memcached" && ha.tasks[name].count != 2 {
			t.Errorf("%s ha count %d, want the default scale 2", name, ha.tasks[name].count)
		}
		u := unl.tasks[name]
		if u.cpu != b.cpu || u.hardLimit || u.meta["orchbench_cores"] != "0" {
			t.Errorf("%s unlimited should reserve baseline with no cap: %+v", name, u)
		}
	}
	if vert.name != "social-network-vertical" || vert.meta["orchbench_variant"] != "vertical" {
		t.Errorf("vertical job %q meta %q", vert.name, vert.meta["orchbench_variant"])
	}
}

func TestSocialNetworkOverridesAndOptions(t *testing.T) {
	job := mustRenderSocial(t, map[string]string{
		"resource_scale": "0.5", "resources": `{ ferretdb = { cores = 2, memory_mib = 2048 } }`,
		"datastore_cpu_limit": "true", "mongodb_uri": "mongodb://127.0.0.1:27017/", "job_name": "sn",
	})
	if _, ok := job.tasks["ferretdb"]; ok {
		t.Error("with mongodb_uri there is no ferretdb task")
	}
	if r := job.tasks["redis"]; !r.hardLimit || r.meta["orchbench_cores"] != "0.5" {
		t.Errorf("datastore_cpu_limit caps redis: %+v", r)
	}
	if job.name != "sn" || job.meta["orchbench_service"] != "sn-frontend" {
		t.Errorf("job %q service %q", job.name, job.meta["orchbench_service"])
	}
	if strings.Contains(job.tasks["user"].templateData, "MONGODB_URI") {
		t.Error("an external MongoDB is set in env, not discovered")
	}
	with := mustRenderSocial(t, map[string]string{"resource_scale": "0.5", "resources": `{ ferretdb = { cores = 2, memory_mib = 2048 } }`})
	if f := with.tasks["ferretdb"]; f.cpu != 2000 || f.memory != 1024 {
		t.Errorf("ferretdb override 2 cores / 2048 MiB at 0.5: %+v", f)
	}
}

// The Thrift client pools of every socialnet service get DeathStarBench's
// connections and timeout, or the variables' values, as flags.
func TestSocialNetworkRPCPoolFlags(t *testing.T) {
	for _, c := range []struct {
		vars  map[string]string
		flags []string
	}{
		{map[string]string{}, []string{"--rpc-connections", "512", "--rpc-timeout", "10s", "--rpc-call-timeout", "30s"}},
		{map[string]string{"rpc_connections": "64", "rpc_timeout": "1m30s", "rpc_call_timeout": "2m"},
			[]string{"--rpc-connections", "64", "--rpc-timeout", "1m30s", "--rpc-call-timeout", "2m"}},
	} {
		job := mustRenderSocial(t, c.vars)
		for _, name := range socialServices {
			if args := strings.Join(job.tasks[name].args, " "); !strings.Contains(args, strings.Join(c.flags, " ")) {
				t.Errorf("%v: %s args %q lack %q", c.vars, name, args, c.flags)
			}
		}
		for _, store := range []string{"ferretdb", "redis", "memcached"} {
			if args := strings.Join(job.tasks[store].args, " "); strings.Contains(args, "--rpc-") {
				t.Errorf("%s is no socialnet service, yet has args %q", store, args)
			}
		}
	}
}

// GOMAXPROCS: one processor for a Go task declared a core or less, Go's
// own default above that, for the stores that are not Go, and with -1.
func TestSocialNetworkGoMaxProcs(t *testing.T) {
	goTasks := append([]string{"ferretdb"}, socialServices...)
	for _, c := range []struct {
		vars map[string]string
		want func(name string) string
	}{
		{map[string]string{"resource_scale": "0.03"}, func(string) string { return "1" }},
		{map[string]string{"go_maxprocs": "-1", "resource_scale": "0.03"}, func(string) string { return "" }},
		{map[string]string{"go_maxprocs": "3"}, func(string) string { return "3" }},
		// at full scale the front end is declared 4 cores and the vertical
		// variant doubles every task: Go sizes those from their quota
		{map[string]string{}, func(name string) string { return map[bool]string{true: "", false: "1"}[name == "frontend"] }},
		{map[string]string{"variant": "vertical"}, func(string) string { return "" }},
	} {
		job := mustRenderSocial(t, c.vars)
		for _, name := range goTasks {
			if got := job.tasks[name].env["GOMAXPROCS"]; got != c.want(name) {
				t.Errorf("%v: %s GOMAXPROCS %q, want %q", c.vars, name, got, c.want(name))
			}
		}
		for _, store := range []string{"redis", "memcached"} {
			if got, ok := job.tasks[store].env["GOMAXPROCS"]; ok {
				t.Errorf("%v: %s is no Go program, yet has GOMAXPROCS %q", c.vars, store, got)
			}
		}
	}
}

// machine_id "index" gives every socialnet instance its index (which
// Kubernetes has only in a StatefulSet); "hostname" sets nothing, and the
// service hashes its host name as DeathStarBench's do. Stores never get one.
func TestSocialNetworkMachineID(t *testing.T) {
	for mode, want := range map[string]string{"": "${NOMAD_ALLOC_INDEX}", "index": "${NOMAD_ALLOC_INDEX}", "hostname": ""} {
		vars := map[string]string{"variant": "horizontal"}
		if mode != "" {
			vars["machine_id"] = mode
		}
		job := mustRenderSocial(t, vars)
		for _, name := range socialServices {
			if got := job.tasks[name].envSource["MACHINE_ID"]; strings.Trim(got, `"`) != want {
				t.Errorf("machine_id %q: %s MACHINE_ID %q, want %q", mode, name, got, want)
			}
		}
		for _, store := range []string{"ferretdb", "redis", "memcached"} {
			if got, ok := job.tasks[store].envSource["MACHINE_ID"]; ok {
				t.Errorf("machine_id %q: store %s has MACHINE_ID %q", mode, store, got)
			}
		}
	}
}

func TestSocialNetworkRejectsBadValues(t *testing.T) {
	for vars, want := range map[string]string{
		"variant=sideways":  "One of|valid variants are: baseline, vertical, horizontal, ha, unlimited",
		"driver=exec":       "driver exec is not supported",
		"scale=-2":          "scale must be a whole number",
		"scale=1.5":         "scale must be a whole number",
		"datastore_scale=0": "datastore_scale must be a whole number of instances >= 1",
		"dataset_users=1":   "dataset_users must be a whole number >= 2",
		"probe_user=962":    "probe_user 962 is not one of the dataset's users 0..961",
		"probe_user=-1":     "probe_user -1 is not one of the dataset's users 0..961",
		"resource_scale=0":  "resource_scale must be > 0",
		"resource_scale=0.001,service_memory_mib=0": "Nomad needs at least 10",
		"rpc_connections=0":                         "rpc_connections must be a whole number of connections >= 1",
		"machine_id=pod":                            `machine_id must be "index" (the instance's index) or "hostname"`,
		"rpc_connections=2.5":                       "rpc_connections must be a whole number of connections >= 1",
		"rpc_timeout=10":                            `rpc_timeout must be a positive Go duration such as 10s or 1m30s, got "10"`,
		"rpc_timeout=0s":                            "rpc_timeout must be a positive Go duration",
		"rpc_timeout=ten sec":                       "rpc_timeout must be a positive Go duration",
		"rpc_call_timeout=-1s":                      "rpc_call_timeout must be a positive Go duration",
		"go_maxprocs=-2":                            "go_maxprocs must be -1 (Go's default), 0",
		"go_maxprocs=1.5":                           "go_maxprocs must be -1 (Go's default), 0",
	} {
		set := map[string]string{}
		for _, kv := range strings.Split(vars, ",") {
			k, v, _ := strings.Cut(kv, "=")
			set[k] = v
		}
		_, err := renderSocial(t, set)
		if err == nil {
			t.Errorf("%s rendered", vars)
			continue
		}
		ok := false
		for _, alt := range strings.Split(want, "|") {
			ok = ok || strings.Contains(err.Error(), alt)
		}
		if !ok {
			t.Errorf("%s: error %q lacks %q", vars, err, want)
		}
	}
}

func TestSocialNetworkVariantDescriptionListsVariants(t *testing.T) {
	dir, _ := Find("social-network")
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Variables["variant"].Description; !strings.HasSuffix(d, "One of: baseline, vertical, horizontal, ha, unlimited.") {
		t.Errorf("variant description must end with the variant list: %q", d)
	}
}

// renderedJob renders packs/<name> with vars (mhz_per_core 2000 unless
// given) and parses its one job file, <name>.nomad; the error is the
// render's, which the tests of bad values expect.
func renderedJob(t *testing.T, name string, vars map[string]string) (*hclsyntax.Block, string, error) {
	t.Helper()
	dir, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, set := vars["mhz_per_core"]; !set {
		vars["mhz_per_core"] = "2000"
	}
	r, err := p.Render(vars, nil)
	if err != nil {
		return nil, "", err
	}
	text := r.Files[name+".nomad"]
	file, diags := hclparse.NewParser().ParseHCL([]byte(text), name+".nomad")
	if diags.HasErrors() {
		t.Fatalf("rendered job is not valid HCL: %s\n%s", diags, text)
	}
	return only(t, file.Body.(*hclsyntax.Body), "job"), text, nil
}

func only(t *testing.T, body *hclsyntax.Body, blockType string) *hclsyntax.Block {
	t.Helper()
	var found []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == blockType {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s block, found %d", blockType, len(found))
	}
	return found[0]
}

func intAttr(t *testing.T, body *hclsyntax.Body, name string) int64 {
	t.Helper()
	attr, ok := body.Attributes[name]
	if !ok {
		t.Fatalf("attribute %s missing", name)
	}
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.Number {
		t.Fatalf("attribute %s is not a number: %s", name, diags)
	}
	i, acc := v.AsBigFloat().Int64()
	if acc != 0 {
		t.Fatalf("attribute %s = %s is not a whole number", name, v.AsBigFloat())
	}
	return i
}

// A miniature keeps its services' memory: resource_scale shrinks their CPU,
// not the buffers and requests in flight that got the user service
// OOM-killed at 31 MiB.
func TestSocialNetworkServiceMemoryFloor(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want int64
	}{
		{map[string]string{"resource_scale": "0.03"}, 256},
		{map[string]string{"resource_scale": "0.03", "variant": "vertical"}, 512},
		{map[string]string{"resource_scale": "0.03", "service_memory_mib": "0"}, 31},
		{map[string]string{"resource_scale": "0.5"}, 512},
	} {
		r := mustRenderSocial(t, c.vars)
		if got := r.tasks["user"].memory; got != c.want {
			t.Errorf("%v: user service %d MiB, want %d", c.vars, got, c.want)
		}
	}
}
