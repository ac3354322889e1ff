package dataset_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/testutil"
)

func load(t *testing.T, frontend string, opts dataset.LoadOptions) (dataset.LoadResult, []string, error) {
	t.Helper()
	var (
		mu    sync.Mutex
		lines []string
	)
	opts.Frontend = frontend
	opts.Progress = func(line string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	result, err := dataset.Load(ctx, opts)
	mu.Lock()
	defer mu.Unlock()
	return result, append([]string(nil), lines...), err
}

func castInfos() int {
	n := 0
	for _, m := range dataset.Movies() {
		n += len(m.CastInfos)
	}
	return n
}

func TestLoadWritesTheDataset(t *testing.T) {
	f := newFake(t)
	started := time.Now()
	result, lines, err := load(t, f.URL, dataset.LoadOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	elapsed := time.Since(started)
	t.Logf("a full load is %d requests (and a GET /healthz): %s against the in-memory fake\n%s",
		result.Requests(), elapsed.Round(time.Millisecond), strings.Join(lines, "\n"))

	movies := len(dataset.Movies())
	want := map[string]int{"users": dataset.DefaultUsers, "movies": movies, "cast-info": castInfos(), "plots": movies, "movie-info": movies}
	if len(result.Phases) != len(want) {
		t.Fatalf("phases %+v", result.Phases)
	}
	for _, p := range result.Phases {
		if p.Total != want[p.Name] || p.OK != p.Total || p.Present != 0 || p.Failed != 0 {
			t.Errorf("phase %+v: want %d ok", p, want[p.Name])
		}
	}
	if result.Requests() != dataset.Requests(dataset.DefaultUsers) {
		t.Errorf("%d requests, Requests says %d", result.Requests(), dataset.Requests(dataset.DefaultUsers))
	}
	writes := f.writes()
	for path, n := range map[string]int{
		"POST /wrk2-api/user/register": dataset.DefaultUsers, "POST /wrk2-api/movie/register": movies,
		"POST /wrk2-api/cast-info/write": castInfos(), "POST /wrk2-api/plot/write": movies, "POST /wrk2-api/movie-info/write": movies,
	} {
		if writes[path] != n {
			t.Errorf("%s sent %d times, want %d", path, writes[path], n)
		}
	}
	f.change(func(f *fakeFrontend) {
		if len(f.titles) != movies || len(f.users) != dataset.DefaultUsers {
			t.Errorf("%d titles and %d users registered", len(f.titles), len(f.users))
		}
	})
}

func TestLoadTwiceChangesNothing(t *testing.T) {
	f := newFake(t)
	if _, _, err := load(t, f.URL, dataset.LoadOptions{Users: 50}); err != nil {
		t.Fatal(err)
	}
	before := f.state()
	result, lines, err := load(t, f.URL, dataset.LoadOptions{Users: 50})
	if err != nil {
		t.Fatalf("second load: %v\n%s", err, strings.Join(lines, "\n"))
	}
	if f.state() != before {
		t.Error("the second load changed what the front end holds")
	}
	movies := len(dataset.Movies())
	for _, p := range result.Phases {
		switch p.Name {
		case "users":
			if p.Present != 50 || p.OK != 0 {
				t.Errorf("users: %+v, want all 50 already present", p)
			}
		case "movies":
			if p.Present != movies || p.OK != 0 {
				t.Errorf("movies: %+v, want all %d already present", p, movies)
			}
		default:
			if p.OK != p.Total || p.Failed != 0 {
				t.Errorf("%s: %+v, want every upsert ok", p.Name, p)
			}
		}
	}
	if !contains(lines, "users: 0 ok, 50 already present, 0 failed of 50 in ") {
		t.Errorf("no closing line for users in\n%s", strings.Join(lines, "\n"))
	}
}

func contains(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestLoadOfAnUnreachableFrontendSaysSo(t *testing.T) {
	started := time.Now()
	_, _, err := load(t, "http://"+testutil.FreeAddr(t), dataset.LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "does not answer GET /healthz") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v", err)
	}
	if elapsed := time.Since(started); elapsed > 5*time.Second {
		t.Errorf("took %s", elapsed)
	}
	if _, _, err := load(t, "127.0.0.1:8080", dataset.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("a URL without a scheme: err = %v", err)
	}
}

// A failed request stops the load after its phase, and the error names the
// request and the answer.
func TestLoadNamesAFailedRequest(t *testing.T) {
	f := newFake(t)
	f.fail = func(r *http.Request) (int, string) {
		if r.URL.Path == "/wrk2-api/movie/register" && r.PostFormValue("title") == "Captain Marvel" {
			return http.StatusServiceUnavailable, "movie-id: " + strings.Repeat("x", 300)
		}
		return 0, ""
	}
	result, _, err := load(t, f.URL, dataset.LoadOptions{Users: 10})
	want := `1 of 995 requests of phase movies failed, so the load stopped there; first: POST /wrk2-api/movie/register "Captain Marvel" (tt0000003): got HTTP 503, body "movie-id: ` + strings.Repeat("x", 190) + `..."`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if len(result.Phases) != 2 || result.Failed() != 1 {
		t.Errorf("phases %+v: want users and movies, one failure", result.Phases)
	}
	if n := f.writes()["POST /wrk2-api/cast-info/write"]; n != 0 {
		t.Errorf("%d cast infos written after the failed phase", n)
	}
}

var runningLine = regexp.MustCompile(`^(users|movies|cast-info|plots|movie-info): (\d+)/(\d+) \(\d+\.\d%\), \d+ failed, \d+\.\d/s, ETA \S+$`)

// TestLoadReportsWhileAPhaseRuns holds the first registration until a
// running line of the users phase has come out, so a loader that reports
// only at a phase's end fails here whatever the machine's speed.
func TestLoadReportsWhileAPhaseRuns(t *testing.T) {
	f := newFake(t)
	seen := make(chan struct{})
	var once, hold sync.Once
	f.fail = func(r *http.Request) (int, string) {
		if r.URL.Path == "/wrk2-api/user/register" {
			f.mu.Unlock()
			hold.Do(func() {
				select {
				case <-seen:
				case <-time.After(5 * time.Second):
				}
			})
			f.mu.Lock()
		}
		return 0, ""
	}
	var (
		mu    sync.Mutex
		lines []string
	)
	_, err := dataset.Load(context.Background(), dataset.LoadOptions{
		Frontend: f.URL, Users: 20, Concurrency: 2, ProgressEvery: 5 * time.Millisecond,
		Progress: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, line)
			if strings.HasPrefix(line, "users: ") && runningLine.MatchString(line) {
				once.Do(func() { close(seen) })
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	default:
		t.Fatalf("no running line of the users phase:\n%s", strings.Join(lines, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	closed := map[string]bool{}
	for _, line := range lines {
		name, _, _ := strings.Cut(line, ":")
		if runningLine.MatchString(line) {
			if closed[name] {
				t.Errorf("running line %q after its phase closed", line)
			}
			continue
		}
		closed[name] = true
	}
	for _, name := range []string{"users", "movies", "cast-info", "plots", "movie-info"} {
		if !closed[name] {
			t.Errorf("no closing line of %s in\n%s", name, strings.Join(lines, "\n"))
		}
	}
}
