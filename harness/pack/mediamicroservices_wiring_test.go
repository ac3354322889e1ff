package pack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices"
	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
	"github.com/orchbench/orchbench/harness/contract"
)

// The meta, read by the harness's own parser: the hooks load and verify
// the dataset through the deployment's front end, and the probe asks for
// the first movie's page.
func TestMediaMicroservicesMeta(t *testing.T) {
	job := mustRenderMedia(t, map[string]string{})
	id := "media-microservices-baseline"
	app, err := contract.ParseApp(&api.Job{ID: &id, Meta: job.meta})
	if err != nil {
		t.Fatal(err)
	}
	if app.Name != "media-microservices" || app.Variant != "baseline" || app.Service != id+"-frontend" {
		t.Errorf("app %q variant %q service %q", app.Name, app.Variant, app.Service)
	}
	for _, c := range []struct {
		hook    contract.Hook
		verb    string
		timeout time.Duration
		extra   []string
	}{{app.Setup, "load", 15 * time.Minute, nil}, {app.Verify, "verify", 5 * time.Minute, []string{"--sampled-users", "50", "--sampled-movies", "50"}}} {
		want := append([]string{"dsb", "media-microservices", c.verb, "--allow-remote", "--frontend", "http://10.0.0.1:8080"}, c.extra...)
		if got := c.hook.Fill("10.0.0.1:8080"); !slices.Equal(got, want) || c.hook.Timeout != c.timeout {
			t.Errorf("%s hook %q (timeout %s), want %q (%s)", c.verb, got, c.hook.Timeout, want, c.timeout)
		}
	}
	if app.Prepare.Args != nil {
		t.Errorf("a prepare hook %q: the dataset is loaded through the API, no image carries it", app.Prepare.Args)
	}
	if !app.ProbeNoLoadReference || app.LoadPath != app.Probe.Path {
		t.Errorf("load path %q, probe %q, probe as the load's reference %v", app.LoadPath, app.Probe.Path, !app.ProbeNoLoadReference)
	}
	u, err := url.Parse(app.Probe.Path)
	if err != nil || u.Path != "/orchbench/page" || u.Query().Get("movie_id") == "" ||
		u.Query().Get("review_start") != "0" || u.Query().Get("review_stop") != "10" {
		t.Fatalf("probe path %q (%v): want the contract's page of one movie", app.Probe.Path, err)
	}
	if app.Probe.Status != 200 {
		t.Errorf("probe status %d", app.Probe.Status)
	}
}

// The probe, checked against the real services: the first movie's page
// passes it once the dataset is loaded, and still with reviews composed;
// it fails before the load (404), and when a store lost its part of the
// page (no cast, no plot).
func TestMediaMicroservicesProbe(t *testing.T) {
	job := mustRenderMedia(t, map[string]string{})
	id := "m"
	app, err := contract.ParseApp(&api.Job{ID: &id, Meta: job.meta})
	if err != nil {
		t.Fatal(err)
	}
	first := dataset.Movies()[0]
	if u, _ := url.Parse(app.Probe.Path); u.Query().Get("movie_id") != first.MovieID || first.Title != dataset.Titles[0] {
		t.Fatalf("the probe %s does not ask for the first title's movie %s", app.Probe.Path, first.MovieID)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	running, err := mediamicroservices.Start(ctx, mediamicroservices.ServiceNames(), nil,
		mediamicroservices.Settings{StorageMode: "memory", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Stop()
	base := "http://" + running.Addrs[mediamicroservices.ServiceFrontend]
	get := func() (int, string) {
		resp, err := http.Get(base + app.Probe.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	passes := func(status int, body string) bool {
		return status == app.Probe.Status && len(body) >= app.Probe.MinBytes && app.Probe.Regex.MatchString(body)
	}

	if status, body := get(); passes(status, body) {
		t.Errorf("before the dataset's load the probe passes: %d %s", status, body)
	}
	if _, err := dataset.Load(ctx, dataset.LoadOptions{Frontend: base, Users: 2}); err != nil {
		t.Fatal(err)
	}
	status, loaded := get()
	if !passes(status, loaded) {
		t.Fatalf("the loaded page fails the probe (%d, %d bytes, min %d, regex %s):\n%s", status, len(loaded), app.Probe.MinBytes, app.Probe.Regex, loaded)
	}
	t.Logf("the loaded page: %d bytes", len(loaded))
	// a review whose text looks like a plot, before the page's cast and plot
	user := dataset.UserN(1)
	resp, err := http.PostForm(base+"/wrk2-api/review/compose", url.Values{"title": {first.Title}, "text": {`"plot":"x" "cast_infos":[{`},
		"username": {user.Username}, "password": {user.Password}, "rating": {"7"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var reviewed string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, body := get(); strings.Contains(body, `"review_id"`) {
			reviewed = body
			break
		}
	}
	if resp.StatusCode != http.StatusOK || reviewed == "" || !passes(http.StatusOK, reviewed) {
		t.Fatalf("compose %s; the page with its review fails the probe or has none:\n%s", resp.Status, reviewed)
	}
	// the page as a store that lost its part would leave it
	var page mm.Page
	if err := json.Unmarshal([]byte(reviewed), &page); err != nil {
		t.Fatal(err)
	}
	for what, change := range map[string]func(p *mm.Page){
		"no cast":       func(p *mm.Page) { p.CastInfos = nil },
		"an empty cast": func(p *mm.Page) { p.CastInfos = []*mm.CastInfo{} },
		"no plot":       func(p *mm.Page) { p.Plot = "" },
		"another movie": func(p *mm.Page) { p.MovieInfo.MovieID = "tt9999999" },
	} {
		broken := page
		info := *page.MovieInfo
		broken.MovieInfo = &info
		change(&broken)
		b, err := json.Marshal(&broken)
		if err != nil {
			t.Fatal(err)
		}
		if passes(http.StatusOK, string(b)+"\n") {
			t.Errorf("a page with %s passes the probe: %s", what, b)
		}
	}
}

// Each service's upstreams template names exactly the services it calls
// (the contract's table) and its own stores, each named after it.
func TestMediaMicroservicesUpstreams(t *testing.T) {
	job := mustRenderMedia(t, map[string]string{"variant": "horizontal", "job_name": "mm"})
	calls := map[string][]string{
		"frontend":       {"user", "movie-id", "text", "unique-id", "cast-info", "plot", "movie-info", "page", "user-review", "rating"},
		"unique-id":      {"compose-review"},
		"movie-id":       {"compose-review", "rating"},
		"text":           {"compose-review"},
		"rating":         {"compose-review"},
		"user":           {"compose-review"},
		"compose-review": {"review-storage", "user-review", "movie-review"},
		"user-review":    {"review-storage"},
		"movie-review":   {"review-storage"},
		"page":           {"movie-info", "cast-info", "plot", "movie-review"},
	}
	storeKey := map[string]string{"mongodb": "MONGODB_URI", "memcached": "MEMCACHED_ADDR", "redis": "REDIS_ADDR"}
	want := map[string]map[string]string{}
	for _, name := range mediaServices {
		want[name] = map[string]string{}
		for _, up := range calls[name] {
			want[name][strings.ToUpper(strings.ReplaceAll(up, "-", "_"))+"_ADDR"] = "mm-" + up
		}
	}
	for _, store := range mediaDatastores {
		kind, owner, _ := strings.Cut(store, "-")
		want[owner][storeKey[kind]] = "mm-" + store
	}
	lookup := regexp.MustCompile(`service "([^"|]+)\|any"`)
	instances := []consulInstance{
		instance("10.0.0.21", 2001, "passing", "critical"),
		instance("10.0.0.22", 2002, "critical", "passing"), // on a failed node
		instance("10.0.0.23", 2003, "passing", "passing"),
	}
	for _, name := range mediaServices {
		task := job.tasks[name]
		if len(want[name]) == 0 {
			if task.hasTemplate {
				t.Errorf("%s calls nothing and has no store, yet has a template", name)
			}
			continue
		}
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
			if _, dup := got[key]; dup {
				t.Errorf("%s: %s twice", name, key)
			}
			got[key] = names[0][1]
			// rendered as consul-template would: every instance but the
			// failed node's, and the first of them for a MongoDB or a Redis
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
			rendered := map[string]string{"MONGODB_URI": "mongodb://10.0.0.21:2001/", "REDIS_ADDR": "10.0.0.21:2001"}[key]
			if rendered == "" {
				rendered = "10.0.0.21:2001,10.0.0.23:2003"
			}
			if out.String() != rendered {
				t.Errorf("%s: %s=%s, want %s", name, key, out.String(), rendered)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want[name]) {
			t.Errorf("%s looks up %v, want %v", name, got, want[name])
		}
		_, hasCalls := task.env["RPC_CONNECTIONS"]
		_, hasPool := task.env["POOL_SIZE"]
		if hasCalls != (len(calls[name]) > 0) || hasPool != (len(want[name]) > len(calls[name])) {
			t.Errorf("%s: RPC_CONNECTIONS %v, POOL_SIZE %v; calls %v, wired %v", name, hasCalls, hasPool, calls[name], want[name])
		}
	}
	// the pack's tables are the port's own
	for _, name := range mediaServices {
		if ups := mediamicroservices.Upstreams[name]; !sameSet(ups, calls[name]) {
			t.Errorf("%s: the port calls %v, the pack wires %v", name, ups, calls[name])
		}
	}
	var stores []string
	for name, kinds := range mediamicroservices.Storage {
		for _, kind := range kinds {
			stores = append(stores, kind+"-"+name)
		}
	}
	if !sameSet(stores, mediaDatastores) {
		t.Errorf("the port's services use the stores %v, the pack runs %v", stores, mediaDatastores)
	}
	// a store's own registration is what its owner looks up
	for _, store := range mediaDatastores {
		if got := job.tasks[store].serviceName; got != "mm-"+store {
			t.Errorf("%s registers %q", store, got)
		}
	}
}

func TestMediaMicroservicesOptions(t *testing.T) {
	job := mustRenderMedia(t, map[string]string{
		"resource_scale": "0.5", "datastore_cpu_limit": "true", "go_maxprocs": "3", "call_timeout": "1m",
		"rpc_connections": "64", "pool_size": "16", "image_tag": "abc",
		"resources": `{ mongodb-review-storage = { cores = 2, memory_mib = 4096 } }`,
	})
	if f := job.tasks["mongodb-review-storage"]; f.cpu != 2000 || f.memory != 2048 || !f.hardLimit || f.meta["orchbench_cores"] != "1" || f.image != "orchbench/ferretdb:abc" {
		t.Errorf("mongodb-review-storage override 2 cores / 4096 MiB at 0.5, capped: %+v", f)
	}
	for _, store := range []string{"memcached-plot", "redis-rating"} {
		if m := job.tasks[store]; !m.hardLimit || m.meta["orchbench_cpu_mode"] != "quota" || !strings.HasSuffix(m.image, ":abc") {
			t.Errorf("datastore_cpu_limit caps %s: %+v", store, m)
		}
		if _, ok := job.tasks[store].env["GOMAXPROCS"]; ok {
			t.Errorf("%s is no Go program, yet has GOMAXPROCS", store)
		}
	}
	for _, name := range []string{"frontend", "compose-review", "page"} {
		env := job.tasks[name].env
		if env["CALL_TIMEOUT"] != "1m" || env["RPC_CONNECTIONS"] != "64" || env["GOMAXPROCS"] != "3" || job.tasks[name].image != "orchbench/mediamicro:abc" {
			t.Errorf("%s env %v image %q", name, env, job.tasks[name].image)
		}
	}
	if env := job.tasks["plot"].env; env["POOL_SIZE"] != "16" || env["CALL_TIMEOUT"] != "" {
		t.Errorf("plot (stores, no upstreams) env %v", env)
	}
	// go_maxprocs 0: one processor for a Go task declared a core or less
	small := mustRenderMedia(t, map[string]string{"resource_scale": "0.03"})
	full := mustRenderMedia(t, map[string]string{})
	for _, name := range append(slices.Clone(mediaServices), "mongodb-plot") {
		if got := small.tasks[name].env["GOMAXPROCS"]; got != "1" {
			t.Errorf("%s at 0.03: GOMAXPROCS %q, want 1", name, got)
		}
	}
	if got := full.tasks["frontend"].env["GOMAXPROCS"]; got != "" {
		t.Errorf("the 4-core frontend at full scale: GOMAXPROCS %q, want Go's own", got)
	}
	// machine_id: each replica its own ID in the IDs it makes, by index
	for _, name := range mediaServices {
		if got := full.tasks[name].envSource["MACHINE_ID"]; got != `"${NOMAD_ALLOC_INDEX}"` {
			t.Errorf("%s MACHINE_ID %s, want the alloc index", name, got)
		}
	}
	hostname := mustRenderMedia(t, map[string]string{"machine_id": "hostname"})
	if _, ok := hostname.tasks["unique-id"].envSource["MACHINE_ID"]; ok {
		t.Error("machine_id = hostname still sets MACHINE_ID")
	}
	named := mustRenderMedia(t, map[string]string{"job_name": "mm"})
	if named.name != "mm" || named.meta["orchbench_service"] != "mm-frontend" || named.tasks["page"].serviceName != "mm-page" {
		t.Errorf("job %q service %q", named.name, named.meta["orchbench_service"])
	}
	if got, err := strconv.Atoi(named.meta["orchbench_count"]); err != nil || got != 1 {
		t.Errorf("orchbench_count %q", named.meta["orchbench_count"])
	}
}
