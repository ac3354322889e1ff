package dataset_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork"
	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
)

const verifyUsers = 40

// fakeFrontend answers timeline reads from counts: user u's timeline holds
// userPosts(u) posts by u, its home timeline homePosts(u) posts by friends.
func fakeFrontend(t *testing.T, userPosts, homePosts func(user int) int) string {
	t.Helper()
	post := func(id, creator int) map[string]any {
		return map[string]any{
			"post_id": strconv.Itoa(id), "req_id": "1", "timestamp": "1700000000000", "text": "hello", "post_type": 0.0,
			"creator":       map[string]any{"user_id": strconv.Itoa(creator), "username": dataset.Username(creator)},
			"user_mentions": []any{}, "media": []any{}, "urls": []any{},
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := strconv.Atoi(r.URL.Query().Get("user_id"))
		if err != nil || user < 0 || user >= verifyUsers {
			// As the real front end: users are 0..N-1, others unknown.
			http.Error(w, "Get user-timeline failure: User with user_id doesn't exist", http.StatusNotFound)
			return
		}
		stop, _ := strconv.Atoi(r.URL.Query().Get("stop"))
		n, creator := 0, user
		switch r.URL.Path {
		case "/wrk2-api/user-timeline/read":
			n = userPosts(user)
		case "/wrk2-api/home-timeline/read":
			n, creator = homePosts(user), (user+1)%verifyUsers
		default:
			http.NotFound(w, r)
			return
		}
		posts := []map[string]any{}
		for i := range min(n, stop) {
			posts = append(posts, post(user*1000+i, creator))
		}
		json.NewEncoder(w).Encode(posts)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func degrees(t *testing.T) []int {
	t.Helper()
	g, err := dataset.Generate(verifyUsers, dataset.EdgesFor(verifyUsers), dataset.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	return g.Degrees()
}

func verify(t *testing.T, frontend string) dataset.VerifyResult {
	t.Helper()
	result, err := dataset.Verify(context.Background(), dataset.VerifyOptions{
		Frontend: frontend, Users: verifyUsers, Samples: 30, Seed: 3, DatasetSeed: dataset.DefaultSeed,
	})
	if err != nil {
		t.Fatal(err)
	}
	return result
}

// TestVerifyRefusesEmptyAndShortTimelines: a complete dataset passes, and
// each way a dataset goes missing (Redis flushed, a load stopped before
// some friends composed) is named, timeline and user.
func TestVerifyRefusesEmptyAndShortTimelines(t *testing.T) {
	deg := degrees(t)
	full := verify(t, fakeFrontend(t, func(int) int { return 1 }, func(u int) int { return deg[u] }))
	if !full.OK() || full.TimelinesRead != 60 {
		t.Fatalf("a complete dataset was refused (%d timelines read): %v", full.TimelinesRead, full.Problems)
	}

	flushed := verify(t, fakeFrontend(t, func(int) int { return 0 }, func(int) int { return 0 }))
	if flushed.OK() {
		t.Fatal("empty timelines passed")
	}
	for _, want := range []string{"user-timeline of user ", "home-timeline of user ", " is empty, want at least "} {
		if !strings.Contains(strings.Join(flushed.Problems, "\n"), want) {
			t.Errorf("no problem says %q: %v", want, flushed.Problems)
		}
	}

	// Every home timeline one post short: only users with two or more friends
	// can tell, and some of the sampled ones must.
	short := verify(t, fakeFrontend(t, func(int) int { return 1 }, func(u int) int { return max(deg[u]-1, 1) }))
	if short.OK() {
		t.Fatal("home timelines missing a friend's post passed")
	}
	for _, p := range short.Problems {
		if !strings.HasPrefix(p, "home-timeline of user ") || !strings.Contains(p, " posts, want at least ") {
			t.Errorf("unexpected problem %q", p)
		}
	}
}

// TestVerifyPassesAfterLoad loads a small dataset into the real services
// (in memory) and verifies it: the minimum per timeline is one the loader
// meets, not only one a fake meets.
func TestVerifyPassesAfterLoad(t *testing.T) {
	running, err := socialnetwork.Start(context.Background(), socialnetwork.ServiceNames(), nil, socialnetwork.Settings{
		StorageMode: "memory", JWTSecret: "test-secret", MachineID: 1, RPCTimeout: 5 * time.Second, PoolSize: 8,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(running.Stop)
	frontend := "http://" + running.Addrs[socialnetwork.ServiceFrontend]
	graph, err := dataset.Generate(verifyUsers, dataset.EdgesFor(verifyUsers), dataset.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	// Before the load every timeline is empty.
	if before := verify(t, frontend); before.OK() {
		t.Fatal("verification passed before any load")
	}
	load, err := dataset.Load(context.Background(), dataset.LoadOptions{Frontend: frontend, Graph: graph, PostsPerUser: 1, Concurrency: 8, Seed: dataset.DefaultSeed})
	if err != nil || load.Failed() > 0 {
		t.Fatalf("load: %v, %+v", err, load)
	}
	// One post per user is the tightest dataset the bound must accept.
	if after := verify(t, frontend); !after.OK() || after.PostsChecked == 0 {
		t.Fatalf("a loaded dataset was refused (%d posts checked): %v", after.PostsChecked, after.Problems)
	}
}

// TestVerifySamplesUsersFromZero: the sampled users are DeathStarBench's
// 0..N-1, the first included and none past the last.
func TestVerifySamplesUsersFromZero(t *testing.T) {
	deg := degrees(t)
	var (
		mu    sync.Mutex
		asked []int
	)
	frontend := fakeFrontend(t, func(u int) int {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, u)
		return 1
	}, func(u int) int { return deg[u] })
	result, err := dataset.Verify(context.Background(), dataset.VerifyOptions{
		Frontend: frontend, Users: verifyUsers, Samples: 400, Seed: 3, DatasetSeed: dataset.DefaultSeed,
	})
	if err != nil || !result.OK() {
		t.Fatalf("verify: %v %v", err, result.Problems)
	}
	mu.Lock()
	defer mu.Unlock()
	lowest, highest := verifyUsers, -1
	for _, u := range asked {
		lowest, highest = min(lowest, u), max(highest, u)
	}
	if lowest != 0 || highest != verifyUsers-1 {
		t.Fatalf("sampled users %d..%d, want 0..%d", lowest, highest, verifyUsers-1)
	}
}

// loadingFrontend answers LOADING, as the services pass on Redis' error
// while it reads its snapshot, for the first `loading` reads, then as
// frontend does.
func loadingFrontend(t *testing.T, frontend string, loading int) string {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		loading--
		still := loading >= 0
		mu.Unlock()
		if still {
			http.Error(w, "Get user-timeline failure: read user timeline from redis: LOADING Redis is loading the dataset in memory", http.StatusInternalServerError)
			return
		}
		resp, err := http.Get(frontend + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		var body json.RawMessage
		json.NewDecoder(resp.Body).Decode(&body)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A store still loading its snapshot is waited for, within the budget,
// and the wait reported; past the budget the LOADING answer is a problem
// as before, and a 500 of another kind is never waited for.
func TestVerifyWaitsForAStoreStillLoading(t *testing.T) {
	deg := degrees(t)
	full := fakeFrontend(t, func(int) int { return 1 }, func(u int) int { return deg[u] })
	opts := dataset.VerifyOptions{Users: verifyUsers, Samples: 5, Seed: 3, DatasetSeed: dataset.DefaultSeed}

	opts.Frontend = loadingFrontend(t, full, 3)
	r, err := dataset.Verify(context.Background(), opts)
	if err != nil || !r.OK() || r.WaitedForLoading < 3*time.Second {
		t.Errorf("3 LOADING answers then a full dataset: waited %s, problems %v, %v", r.WaitedForLoading, r.Problems, err)
	}

	opts.Frontend, opts.LoadingWait = loadingFrontend(t, full, 1000), 2*time.Second
	r, err = dataset.Verify(context.Background(), opts)
	if err != nil || r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), "HTTP 500: Get user-timeline failure: read user timeline from redis: LOADING") {
		t.Errorf("a store loading past the budget passed: %v, %v", r.Problems, err)
	}
	if r.WaitedForLoading > 3*time.Second {
		t.Errorf("waited %s past a 2 s budget", r.WaitedForLoading)
	}

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Get user-timeline failure: connection refused", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	opts.Frontend, opts.LoadingWait = failing.URL, 0
	began := time.Now()
	if r, _ = dataset.Verify(context.Background(), opts); r.OK() || r.WaitedForLoading != 0 || time.Since(began) > 5*time.Second {
		t.Errorf("another 500 was waited for (%s) or passed: %v", r.WaitedForLoading, r.Problems)
	}
}
