package loadgen

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHostsShareTheConnections(t *testing.T) {
	a, b := newServer(t, nil), newServer(t, nil)
	hostOf := func(s *countingServer) string { return strings.TrimPrefix(s.URL, "http://") }
	res := runLoad(t, Config{
		URL: a.URL + "/x", Hosts: []string{hostOf(a), hostOf(b)},
		Threads: 2, Connections: 4, Rate: 200, Duration: time.Second,
	})
	na, nb := a.hits.Load(), b.hits.Load()
	if res.Requests == 0 || na+nb < res.Requests {
		t.Fatalf("servers saw %d+%d requests, result counts %d", na, nb, res.Requests)
	}
	// Both hosts carry two connections on the same schedule: an even
	// split up to the requests in flight at the end.
	for _, n := range []int64{na, nb} {
		if share := float64(n) / float64(na+nb); share < 0.35 || share > 0.65 {
			t.Fatalf("uneven split %d/%d", na, nb)
		}
	}
	if a.conns.Load() != 2 || b.conns.Load() != 2 {
		t.Fatalf("connections per host %d/%d, want 2/2", a.conns.Load(), b.conns.Load())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.seen) == 0 || b.seen[0].uri != "/x" {
		t.Fatalf("second host should get the URL's path, saw %+v", b.seen)
	}
}

func TestHostsAreCheckedLikeTheURL(t *testing.T) {
	_, err := Run(t.Context(), Config{URL: "http://127.0.0.1:1/", Hosts: []string{"127.0.0.1:1", "192.0.2.1:80"}, Rate: 10, Duration: time.Second})
	if err == nil || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("remote host accepted: %v", err)
	}
	_, err = Run(t.Context(), Config{URL: "http://127.0.0.1:1/", Hosts: []string{"127.0.0.1"}, Rate: 10, Duration: time.Second})
	if err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Fatalf("host without port accepted: %v", err)
	}
}

func TestGetPathsWorkload(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	w, err := WorkloadByName("get-paths:/a,/b")
	if err != nil {
		t.Fatal(err)
	}
	res := runLoad(t, Config{URL: s.URL, Workload: w, WorkloadName: "get-paths:/a,/b", Connections: 4,
		Closed: &Closed{MaxRequests: 400}, Seed: 7})
	if res.Requests != 400 {
		t.Fatalf("%d requests, want 400", res.Requests)
	}
	s.mu.Lock()
	count := map[string]int{}
	for _, r := range s.seen {
		count[r.uri]++
	}
	s.mu.Unlock()
	if len(count) != 2 || count["/a"] < 100 || count["/b"] < 100 {
		t.Fatalf("paths not uniform over /a and /b: %v", count)
	}
	if res.Config.Workload != "get-paths:/a,/b" {
		t.Fatalf("workload not echoed: %q", res.Config.Workload)
	}
}

func TestWorkloadByNameErrors(t *testing.T) {
	if _, err := WorkloadByName("nope:x"); err == nil || !strings.Contains(err.Error(), "get-paths") {
		t.Fatalf("unknown workload should list the registered ones: %v", err)
	}
	for _, spec := range []string{"get-paths", "get-paths:", "get-paths:a"} {
		if _, err := WorkloadByName(spec); err == nil {
			t.Fatalf("%q accepted", spec)
		}
	}
}
