package pack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// These tests pin the conventions of packs/taewa that the harness relies on:
// the variant ratios, resource_scale, mhz_per_core and the job meta.

func renderTaewa(t *testing.T, overrides map[string]string) string {
	t.Helper()
	dir, err := Find("taewa")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Render(overrides, nil)
	if err != nil {
		t.Fatalf("render taewa %v: %v", overrides, err)
	}
	if got := r.JobFiles(); len(got) != 1 || got[0] != "taewa.nomad" {
		t.Fatalf("taewa should render exactly one job, got %v", got)
	}
	return r.Files["taewa.nomad"]
}

// jobSpec is the part of a rendered job the tests look at, read with the
// plain HCL parser so a syntax error in the templates fails here even
// without a Nomad agent to parse the job.
type jobSpec struct {
	name      string
	count     int64
	meta      map[string]string
	resources map[string]int64
	config    map[string]cty.Value
	env       hcl.Attributes
	body      *hclsyntax.Body
}

func parseJob(t *testing.T, text string) jobSpec {
	t.Helper()
	file, diags := hclparse.NewParser().ParseHCL([]byte(text), "taewa.nomad")
	if diags.HasErrors() {
		t.Fatalf("rendered job is not valid HCL: %s\n%s", diags, text)
	}
	body := file.Body.(*hclsyntax.Body)
	job := only(t, body, "job")
	group := only(t, job.Body, "group")
	task := only(t, group.Body, "task")
	spec := jobSpec{
		name:      job.Labels[0],
		count:     intAttr(t, group.Body, "count"),
		meta:      map[string]string{},
		resources: map[string]int64{},
		config:    map[string]cty.Value{},
		env:       hcl.Attributes{},
		body:      body,
	}
	for name, attr := range only(t, job.Body, "meta").Body.Attributes {
		v, diags := attr.Expr.Value(nil)
		if diags.HasErrors() || v.Type() != cty.String {
			t.Fatalf("meta %s is not a literal string: %s", name, diags)
		}
		spec.meta[name] = v.AsString()
	}
	res := only(t, task.Body, "resources").Body
	for name := range res.Attributes {
		spec.resources[name] = intAttr(t, res, name)
	}
	for name, attr := range only(t, task.Body, "config").Body.Attributes {
		v, diags := attr.Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("config %s: %s", name, diags)
		}
		spec.config[name] = v
	}
	for name, attr := range only(t, task.Body, "env").Body.Attributes {
		spec.env[name] = attr.AsHCLAttribute()
	}
	return spec
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

func TestTaewaVerticalIsTwiceBaseline(t *testing.T) {
	base := parseJob(t, renderTaewa(t, map[string]string{"variant": "baseline", "resource_scale": "0.25"}))
	vert := parseJob(t, renderTaewa(t, map[string]string{"variant": "vertical", "resource_scale": "0.25"}))
	if base.resources["cpu"] != 525 || base.resources["memory"] != 256 {
		t.Errorf("baseline at 0.25 should be 0.25 core x 2100 MHz = 525 MHz and 256 MiB, got %v", base.resources)
	}
	if vert.resources["cpu"] != 2*base.resources["cpu"] || vert.resources["memory"] != 2*base.resources["memory"] {
		t.Errorf("vertical %v is not twice baseline %v", vert.resources, base.resources)
	}
	if base.count != 1 || vert.count != 1 {
		t.Errorf("counts %d, %d; want 1", base.count, vert.count)
	}
	if base.name != "taewa-baseline" || vert.name != "taewa-vertical" {
		t.Errorf("job names %q, %q", base.name, vert.name)
	}
	if base.meta["orchbench_cores"] != "0.25" || vert.meta["orchbench_cores"] != "0.5" ||
		base.meta["orchbench_memory_mib"] != "256" || vert.meta["orchbench_memory_mib"] != "512" {
		t.Errorf("meta does not match resources: baseline %v, vertical %v", base.meta, vert.meta)
	}
	for _, s := range []jobSpec{base, vert} {
		if !s.config["cpu_hard_limit"].True() {
			t.Errorf("%s: docker variants other than unlimited need cpu_hard_limit = true", s.name)
		}
	}
}

func TestTaewaFullSizeAndNodeMHz(t *testing.T) {
	s := parseJob(t, renderTaewa(t, map[string]string{"variant": "vertical", "mhz_per_core": "2994.5"}))
	// 2 cores x 2994.5 MHz = 5989 MHz; 2 GiB.
	if s.resources["cpu"] != 5989 || s.resources["memory"] != 2048 {
		t.Errorf("vertical at full size on a 2994.5 MHz/core node: %v", s.resources)
	}
	if s.meta["orchbench_cpu_mhz"] != "5989" || s.meta["orchbench_cores"] != "2" {
		t.Errorf("meta %v", s.meta)
	}
}

func TestTaewaHorizontalCountIsScale(t *testing.T) {
	base := parseJob(t, renderTaewa(t, map[string]string{"resource_scale": "0.5"}))
	for _, scale := range []int64{1, 2, 5} {
		s := parseJob(t, renderTaewa(t, map[string]string{"variant": "horizontal", "scale": fmt.Sprint(scale), "resource_scale": "0.5"}))
		if s.count != scale || s.meta["orchbench_count"] != fmt.Sprint(scale) {
			t.Errorf("scale %d: count %d, meta count %s", scale, s.count, s.meta["orchbench_count"])
		}
		if s.resources["cpu"] != base.resources["cpu"] || s.resources["memory"] != base.resources["memory"] {
			t.Errorf("horizontal instances must keep baseline resources %v, got %v", base.resources, s.resources)
		}
	}
	// Unset, scale keeps each variant's own count; set, it applies to all.
	if s := parseJob(t, renderTaewa(t, map[string]string{"variant": "horizontal"})); s.count != 2 {
		t.Errorf("horizontal without scale has count %d, want 2", s.count)
	}
	if s := parseJob(t, renderTaewa(t, map[string]string{"variant": "vertical"})); s.count != 1 {
		t.Errorf("vertical without scale has count %d, want 1", s.count)
	}
	vert := parseJob(t, renderTaewa(t, map[string]string{"variant": "vertical"}))
	if s := parseJob(t, renderTaewa(t, map[string]string{"variant": "vertical", "scale": "4"})); s.count != 4 || s.resources["cpu"] != vert.resources["cpu"] {
		t.Errorf("vertical with scale=4: count %d, cpu %v (want 4 instances of the vertical size %v)", s.count, s.resources["cpu"], vert.resources["cpu"])
	}
}

func TestTaewaUnlimitedHasNoCPUCap(t *testing.T) {
	s := parseJob(t, renderTaewa(t, map[string]string{"variant": "unlimited", "resource_scale": "0.25"}))
	if s.config["cpu_hard_limit"].True() {
		t.Error("unlimited must not set cpu_hard_limit")
	}
	if s.resources["cpu"] != 525 || s.resources["memory"] != 256 || s.resources["memory_max"] != 8*256 {
		t.Errorf("unlimited reserves baseline and may burst to 8x memory, got %v", s.resources)
	}
	if s.meta["orchbench_cores"] != "0" || s.meta["orchbench_memory_mib"] != "2048" || s.meta["orchbench_cpu_mode"] != "shares" {
		t.Errorf("meta must say no CPU cap and the memory_max ceiling: %v", s.meta)
	}
}

func TestTaewaExecDriver(t *testing.T) {
	whole := parseJob(t, renderTaewa(t, map[string]string{"driver": "exec", "variant": "vertical"}))
	if whole.resources["cores"] != 2 || whole.resources["cpu"] != 0 || whole.meta["orchbench_cpu_mode"] != "cpuset" {
		t.Errorf("exec with whole cores should use a cpuset: %v %v", whole.resources, whole.meta)
	}
	if got := whole.config["command"].AsString(); got != "node" {
		t.Errorf("command %q", got)
	}
	if args := whole.config["args"].AsValueSlice(); len(args) != 1 {
		t.Errorf("args %#v", args)
	}
	port := whole.env["PORT"].Expr.Variables()
	if len(port) != 1 || port[0].RootName() != "NOMAD_PORT_http" {
		t.Errorf("exec PORT must come from NOMAD_PORT_http, references %v", port)
	}
	frac := parseJob(t, renderTaewa(t, map[string]string{"driver": "exec", "resource_scale": "0.25"}))
	if frac.resources["cpu"] != 525 || frac.resources["cores"] != 0 || frac.meta["orchbench_cpu_mode"] != "unenforced" {
		t.Errorf("exec with fractional cores falls back to cpu MHz: %v %v", frac.resources, frac.meta)
	}
}

func TestTaewaDockerNetworking(t *testing.T) {
	text := renderTaewa(t, nil)
	s := parseJob(t, text)
	if s.config["image"].AsString() != "orchbench/taewa:local" {
		t.Errorf("image %v", s.config["image"])
	}
	port, diags := s.env["PORT"].Expr.Value(nil)
	if diags.HasErrors() || port.AsString() != "8080" {
		t.Errorf("docker PORT should be 8080 inside the bridge namespace, got %v %s", port, diags)
	}
	wantContains(t, text, `mode = "bridge"`, `to = 8080`, `ports          = ["http"]`)
}

func TestTaewaMetaAndService(t *testing.T) {
	text := renderTaewa(t, map[string]string{"difficulty": "250", "variant": "horizontal", "scale": "3"})
	s := parseJob(t, text)
	want := map[string]string{
		"orchbench_app":             "taewa",
		"orchbench_variant":         "horizontal",
		"orchbench_resource_scale":  "1",
		"orchbench_cores":           "1",
		"orchbench_memory_mib":      "1024",
		"orchbench_count":           "3",
		"orchbench_service":         "taewa",
		"orchbench_probe_path":      "/?n=250",
		"orchbench_probe_min_bytes": "44",
		"orchbench_probe_regex":     "^The result of this run is :  ",
		"orchbench_load_path":       "/?n=250",
	}
	for k, v := range want {
		if s.meta[k] != v {
			t.Errorf("meta %s = %q, want %q", k, s.meta[k], v)
		}
	}
	wantContains(t, text,
		`provider = "consul"`, `name     = "taewa"`, `tags     = ["orchbench", "variant-horizontal"]`,
		`path     = "/?n=1"`, `interval = "2s"`, `timeout  = "1s"`,
		`attempts  = 0`, `kill_timeout = "5s"`)

	renamed := parseJob(t, renderTaewa(t, map[string]string{"job_name": "taewa-exp7", "datacenters": `["a", "b"]`}))
	if renamed.name != "taewa-exp7" || renamed.meta["orchbench_service"] != "taewa-exp7" {
		t.Errorf("job_name should name the job and its service: %q %v", renamed.name, renamed.meta["orchbench_service"])
	}
}

func TestTaewaRejectsBadValues(t *testing.T) {
	dir, err := Find("taewa")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		overrides map[string]string
		want      string
	}{
		{map[string]string{"variant": "bogus"}, `taewa: unknown variant "bogus"; valid variants are: baseline, vertical, horizontal, unlimited`},
		{map[string]string{"driver": "podman"}, `unknown driver "podman"; valid drivers are: docker, exec`},
		{map[string]string{"variant": "horizontal", "scale": "-1"}, "scale must be a whole number of instances (0 keeps the variant's own), got -1"},
		{map[string]string{"scale": "1.5"}, "scale must be a whole number of instances (0 keeps the variant's own), got 1.5"},
		{map[string]string{"resource_scale": "0"}, "resource_scale must be > 0"},
		{map[string]string{"resource_scale": "0.005"}, "leaves 5 MiB per instance"},
		{map[string]string{"scale": "two"}, `--var scale=two: a number is required (variable "scale" has type number`},
	} {
		_, err := p.Render(c.overrides, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v\nwant it to contain %s", c.overrides, err, c.want)
		}
	}
	_, err = p.Render(map[string]string{"variant": "bogus"}, nil)
	if !strings.Contains(err.Error(), "packs/taewa/templates/_helpers.tpl:") {
		t.Errorf("the variant error should point at the helper that failed: %v", err)
	}
}

func TestTaewaEveryCombinationIsValidHCL(t *testing.T) {
	for _, variant := range []string{"baseline", "vertical", "horizontal", "unlimited"} {
		for _, driver := range []string{"docker", "exec"} {
			for _, rs := range []string{"0.1", "0.25", "1", "1.5"} {
				s := parseJob(t, renderTaewa(t, map[string]string{"variant": variant, "driver": driver, "resource_scale": rs}))
				if s.resources["memory"] < 10 || (s.resources["cpu"] < 1 && s.resources["cores"] < 1) {
					t.Errorf("%s/%s/%s: resources %v below Nomad's minimums", variant, driver, rs, s.resources)
				}
			}
		}
	}
}
