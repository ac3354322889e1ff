package dataset

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		done, failures, total int64
		elapsed               time.Duration
		want                  string
	}{
		{50, 2, 200, 10 * time.Second, "follow: 50/200 follows (25.0%), 2 failed, 5.0/s, ETA 30s"},
		{0, 0, 200, 10 * time.Second, "follow: 0/200 follows (0.0%), 0 failed, 0.0/s, ETA unknown"},
		{37000, 0, 37624, 7 * time.Minute, "follow: 37000/37624 follows (98.3%), 0 failed, 88.1/s, ETA 7s"},
	} {
		if got := progressLine("follow", "follows", c.done, c.failures, c.total, c.elapsed); got != c.want {
			t.Errorf("progressLine(%d, %d, %d, %s) = %q, want %q", c.done, c.failures, c.total, c.elapsed, got, c.want)
		}
	}
}

var runningLine = regexp.MustCompile(`^(register|check|follow|compose): (\d+)/(\d+) (users|follows) \(\d+\.\d%\), (\d+) failed, \d+\.\d/s, ETA ([^,\s]+)`)

// TestLoadReportsWhilePhasesRun holds the first request of each phase until
// a progress line of that phase has come out, so a phase that reports only
// when it ends fails here, deterministically, whatever the machine's speed.
func TestLoadReportsWhilePhasesRun(t *testing.T) {
	const users = 12
	graph, err := Generate(users, EdgesFor(users), DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		lines []string
		seen  = map[string]chan struct{}{"register": make(chan struct{}), "follow": make(chan struct{}), "compose": make(chan struct{})}
		held  = map[string]*sync.Once{"register": {}, "follow": {}, "compose": {}}
	)
	progress := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
		if m := runningLine.FindStringSubmatch(line); m != nil {
			if ch, ok := seen[m[1]]; ok {
				select {
				case <-ch:
				default:
					close(ch)
				}
			}
		}
	}
	var timedOut sync.Map
	hold := func(name string) {
		held[name].Do(func() {
			select {
			case <-seen[name]:
			case <-time.After(5 * time.Second):
				timedOut.Store(name, true)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wrk2-api/user/register":
			hold("register")
			w.Write([]byte("Success!\n"))
		case "/wrk2-api/user/follow":
			hold("follow")
			w.Write([]byte("Success!\n"))
		case "/wrk2-api/post/compose":
			hold("compose")
			w.Write([]byte("Successfully upload post\n"))
		case "/wrk2-api/user-timeline/read":
			w.Write([]byte("[]\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	result, err := Load(context.Background(), LoadOptions{
		Frontend: srv.URL, Graph: graph, PostsPerUser: 1, Concurrency: 2, Seed: 1,
		Progress: progress, ProgressEvery: 5 * time.Millisecond,
	})
	if err != nil || result.Failed() > 0 {
		t.Fatalf("load: %v %+v", err, result)
	}
	timedOut.Range(func(name, _ any) bool {
		t.Errorf("phase %s printed no progress line within 5 s of its first request", name)
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	// Each running line counts within its phase's total and comes before
	// that phase's closing line.
	totals := map[string]int{"register": users, "check": users, "follow": 2 * len(graph.Edges), "compose": users}
	closed := map[string]bool{}
	for _, line := range lines {
		m := runningLine.FindStringSubmatch(line)
		if m == nil {
			closed[strings.SplitN(line, ":", 2)[0]] = true
			continue
		}
		done, _ := strconv.Atoi(m[2])
		total, _ := strconv.Atoi(m[3])
		if total != totals[m[1]] || done > total || closed[m[1]] {
			t.Errorf("line %q: want at most %d of %d, before the phase's closing line", line, total, totals[m[1]])
		}
		if _, err := time.ParseDuration(m[6]); err != nil && m[6] != "unknown" {
			t.Errorf("line %q: ETA %q is not a duration", line, m[6])
		}
	}
	for _, name := range []string{"register", "follow", "compose"} {
		if !closed[name] {
			t.Errorf("no closing line for %s in %q", name, lines)
		}
	}
}
