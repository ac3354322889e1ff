package nomadattrs

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const (
	allocA = "0b7c2f7e-1d2a-4e5f-9a1b-2c3d4e5f6a7b"
	allocB = "1b7c2f7e-1d2a-4e5f-9a1b-2c3d4e5f6a7b"
	allocC = "2b7c2f7e-1d2a-4e5f-9a1b-2c3d4e5f6a7b"
)

// fakeNomad answers /v1/allocation/<id> like Nomad for the allocations it
// knows and 404 for the others, counting the requests per allocation.
type fakeNomad struct {
	allocs map[string]allocInfo
	hits   map[string]*atomic.Int32
	srv    *httptest.Server
}

func newFakeNomad(t *testing.T, allocs ...allocInfo) *fakeNomad {
	f := &fakeNomad{allocs: map[string]allocInfo{}, hits: map[string]*atomic.Int32{}}
	for _, a := range allocs {
		f.allocs[a.ID] = a
		f.hits[a.ID] = &atomic.Int32{}
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/v1/allocation/")
		if c := f.hits[id]; c != nil {
			c.Add(1)
		}
		a, ok := f.allocs[id]
		if !ok {
			http.Error(w, "alloc not found", http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeNomad) count(id string) int32 { return f.hits[id].Load() }

func logPathOf(alloc, task, stream string, n int) string {
	return "/var/nomad/alloc/" + alloc + "/alloc/logs/" + task + "." + stream + "." + string(rune('0'+n))
}

// batch builds one resource with a record per path; the body is the path so
// the test can tell the records apart.
func batch(paths ...string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("host.name", "node-1")
	sl := rl.ScopeLogs().AppendEmpty()
	for _, p := range paths {
		r := sl.LogRecords().AppendEmpty()
		r.Body().SetStr("line from " + p)
		r.Attributes().PutStr("log.file.path", p)
	}
	return ld
}

type testProc struct {
	p    *attrsProcessor
	logs *observer.ObservedLogs
	now  time.Time
}

func newTestProc(t *testing.T, endpoint string, cacheSize int) *testProc {
	core, logs := observer.New(zapcore.WarnLevel)
	cfg := createDefaultConfig()
	cfg.Endpoint = endpoint
	cfg.CacheSize = cacheSize
	cfg.Timeout = time.Second
	tp := &testProc{logs: logs, now: time.Unix(1_000_000, 0)}
	r, err := newResolver(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	tp.p = &attrsProcessor{pathAttr: cfg.PathAttribute, resolver: r}
	tp.p.resolver.now = func() time.Time { return tp.now }
	return tp
}

func (tp *testProc) run(t *testing.T, ld plog.Logs) plog.Logs {
	t.Helper()
	out, err := tp.p.processLogs(context.Background(), ld)
	if err != nil {
		t.Fatalf("processLogs: %v", err)
	}
	return out
}

// resources maps each record body to its resource's attributes.
func resources(ld plog.Logs) map[string]map[string]any {
	got := map[string]map[string]any{}
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			recs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < recs.Len(); k++ {
				got[recs.At(k).Body().Str()] = rl.Resource().Attributes().AsRaw()
			}
		}
	}
	return got
}

func TestHitSetsAttributesAndCachesPerAlloc(t *testing.T) {
	nomad := newFakeNomad(t, allocInfo{ID: allocA, Namespace: "default", JobID: "web", TaskGroup: "frontend", NodeName: "node-1"})
	tp := newTestProc(t, nomad.srv.URL, 16)
	out := tp.run(t, batch(logPathOf(allocA, "web", "stdout", 0), logPathOf(allocA, "web", "stderr", 1), logPathOf(allocA, "web", "stdout", 0)))

	if n := out.LogRecordCount(); n != 3 {
		t.Fatalf("records out = %d, want 3", n)
	}
	if n := out.ResourceLogs().Len(); n != 2 {
		t.Fatalf("resources out = %d, want 2 (one per stream)", n)
	}
	got := resources(out)
	want := map[string]any{
		"host.name": "node-1", AttrAllocID: allocA, AttrTask: "web", AttrStream: "stderr",
		AttrNamespace: "default", AttrJob: "web", AttrGroup: "frontend", AttrNode: "node-1",
	}
	assertAttrs(t, got["line from "+logPathOf(allocA, "web", "stderr", 1)], want)
	want[AttrStream] = "stdout"
	assertAttrs(t, got["line from "+logPathOf(allocA, "web", "stdout", 0)], want)

	tp.run(t, batch(logPathOf(allocA, "web", "stdout", 0)))
	if n := nomad.count(allocA); n != 1 {
		t.Errorf("Nomad asked %d times for one allocation over two batches, want 1 (cached)", n)
	}
	if tp.logs.Len() != 0 {
		t.Errorf("unexpected warnings: %v", tp.logs.All())
	}
}

func TestUnknownAllocPassesWithPathAttributesAndRetriesLater(t *testing.T) {
	nomad := newFakeNomad(t)
	nomad.hits[allocB] = &atomic.Int32{}
	tp := newTestProc(t, nomad.srv.URL, 16)
	p := logPathOf(allocB, "api", "stdout", 3)

	got := resources(tp.run(t, batch(p)))
	assertAttrs(t, got["line from "+p], map[string]any{"host.name": "node-1", AttrAllocID: allocB, AttrTask: "api", AttrStream: "stdout"})
	if tp.logs.FilterMessageSnippet("did not resolve").Len() != 1 {
		t.Fatalf("want one warning naming the failed lookup, got %v", tp.logs.All())
	}

	tp.run(t, batch(p))
	if n := nomad.count(allocB); n != 1 {
		t.Errorf("Nomad asked %d times within retry_after, want 1", n)
	}
	tp.now = tp.now.Add(31 * time.Second)
	nomad.allocs[allocB] = allocInfo{ID: allocB, Namespace: "default", JobID: "api", TaskGroup: "g", NodeName: "node-1"}
	got = resources(tp.run(t, batch(p)))
	if n := nomad.count(allocB); n != 2 {
		t.Errorf("Nomad asked %d times after retry_after, want 2", n)
	}
	if got["line from "+p][AttrJob] != "api" {
		t.Errorf("after the retry nomad.job = %v, want api", got["line from "+p][AttrJob])
	}
}

func TestNomadDownRecordsPassAndWarningIsLogged(t *testing.T) {
	nomad := newFakeNomad(t)
	url := nomad.srv.URL
	nomad.srv.Close() // nothing listens there any more
	tp := newTestProc(t, url, 16)
	p := logPathOf(allocC, "db", "stderr", 0)

	in := batch(p, "/var/log/syslog")
	out := tp.run(t, in)
	if n := out.LogRecordCount(); n != 2 {
		t.Fatalf("records out = %d, want 2: nothing may be dropped when Nomad is down", n)
	}
	got := resources(out)
	assertAttrs(t, got["line from "+p], map[string]any{"host.name": "node-1", AttrAllocID: allocC, AttrTask: "db", AttrStream: "stderr"})
	assertAttrs(t, got["line from /var/log/syslog"], map[string]any{"host.name": "node-1"})
	w := tp.logs.FilterMessageSnippet("did not resolve").All()
	if len(w) != 1 || w[0].ContextMap()["alloc_id"] != allocC || !strings.Contains(w[0].ContextMap()["error"].(string), "connect") {
		t.Fatalf("want one warning with alloc_id and the connection error, got %v", tp.logs.All())
	}
}

func TestCacheIsBounded(t *testing.T) {
	nomad := newFakeNomad(t,
		allocInfo{ID: allocA, JobID: "a"}, allocInfo{ID: allocB, JobID: "b"}, allocInfo{ID: allocC, JobID: "c"})
	tp := newTestProc(t, nomad.srv.URL, 2)
	for _, a := range []string{allocA, allocB, allocC} {
		tp.run(t, batch(logPathOf(a, "t", "stdout", 0)))
	}
	if n := tp.p.resolver.cached(); n != 2 {
		t.Fatalf("cache holds %d allocations, want the bound 2", n)
	}
	tp.run(t, batch(logPathOf(allocC, "t", "stdout", 0))) // most recent: still cached
	tp.run(t, batch(logPathOf(allocA, "t", "stdout", 0))) // least recent: evicted
	if a, c := nomad.count(allocA), nomad.count(allocC); a != 2 || c != 1 {
		t.Errorf("requests: alloc A %d (want 2, evicted), alloc C %d (want 1, cached)", a, c)
	}
}

func TestParsePath(t *testing.T) {
	cases := []struct {
		path string
		want source
		ok   bool
	}{
		{logPathOf(allocA, "web", "stdout", 0), source{allocA, "web", "stdout"}, true},
		{"/d/alloc/" + allocA + "/alloc/logs/my.task.stderr.12", source{allocA, "my.task", "stderr"}, true},
		{"/d/alloc/" + allocA + "/alloc/logs/.web.stdout.fifo", source{}, false},
		{"/d/alloc/" + allocA + "/alloc/logs/web.stdout", source{}, false},
		{"/d/alloc/not-a-uuid/alloc/logs/web.stdout.0", source{}, false},
	}
	for _, c := range cases {
		got, ok := parsePath(c.path)
		if got != c.want || ok != c.ok {
			t.Errorf("parsePath(%q) = %+v, %v; want %+v, %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := map[string]func(*Config){
		"endpoint":       func(c *Config) { c.Endpoint = "127.0.0.1:4646" },
		"timeout":        func(c *Config) { c.Timeout = 0 },
		"cache_size":     func(c *Config) { c.CacheSize = 0 },
		"retry_after":    func(c *Config) { c.RetryAfter = -time.Second },
		"path_attribute": func(c *Config) { c.PathAttribute = "" },
	}
	if err := createDefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for field, breakIt := range bad {
		c := createDefaultConfig()
		breakIt(c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("broken %s: error %v does not name the field", field, err)
		}
	}
}

// TestFactoryPipeline runs the processor as the collector does, through its
// factory, and checks the records reach the next consumer.
func TestFactoryPipeline(t *testing.T) {
	nomad := newFakeNomad(t, allocInfo{ID: allocA, Namespace: "default", JobID: "web", TaskGroup: "g", NodeName: "n"})
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Endpoint = nomad.srv.URL
	sink := new(consumertest.LogsSink)
	p, err := f.CreateLogs(context.Background(), processortest.NewNopSettings(Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ConsumeLogs(context.Background(), batch(logPathOf(allocA, "web", "stdout", 0))); err != nil {
		t.Fatal(err)
	}
	all := sink.AllLogs()
	if len(all) != 1 || all[0].LogRecordCount() != 1 {
		t.Fatalf("next consumer got %d batches, want 1 with 1 record", len(all))
	}
	if v, _ := all[0].ResourceLogs().At(0).Resource().Attributes().Get(AttrJob); v.Str() != "web" {
		t.Errorf("nomad.job = %q, want web", v.Str())
	}
}

func assertAttrs(t *testing.T, got, want map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("attributes %v, want exactly %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("attribute %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
