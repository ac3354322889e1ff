package dataset

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// rerunAgainst runs Load against a front end whose every user is
// registered and whose timelines have posts or not as given, and counts the
// follows and composes sent.
func rerunAgainst(t *testing.T, userTimelines, homeTimelines bool) (LoadResult, int64, int64) {
	return rerunWith(t, userTimelines, homeTimelines, false)
}

// rerunWith is rerunAgainst; homePartial makes every home timeline hold one
// post, whatever is asked, as after a re-run interrupted mid-compose.
func rerunWith(t *testing.T, userTimelines, homeTimelines, homePartial bool) (LoadResult, int64, int64) {
	t.Helper()
	const users = 12
	graph, err := Generate(users, EdgesFor(users), DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	var follows, composes atomic.Int64
	// a timeline that has posts holds as many as asked for
	timeline := func(has bool, r *http.Request) string {
		if !has {
			return "[]\n"
		}
		n, _ := strconv.Atoi(r.FormValue("stop"))
		return "[" + strings.TrimSuffix(strings.Repeat(`{"post_id":"1"},`, max(n, 1)), ",") + "]\n"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wrk2-api/user/register":
			http.Error(w, "User registration failure: User "+r.FormValue("username")+" already existed", http.StatusConflict)
		case "/wrk2-api/user/follow":
			follows.Add(1)
			w.Write([]byte("Success!\n"))
		case "/wrk2-api/post/compose":
			composes.Add(1)
			w.Write([]byte("Successfully upload post\n"))
		case "/wrk2-api/user-timeline/read":
			w.Write([]byte(timeline(userTimelines, r)))
		case "/wrk2-api/home-timeline/read":
			if homePartial {
				w.Write([]byte(`[{"post_id":"1"}]` + "\n"))
				return
			}
			w.Write([]byte(timeline(homeTimelines, r)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	result, err := Load(context.Background(), LoadOptions{Frontend: srv.URL, Graph: graph, PostsPerUser: 2, Concurrency: 4, Seed: 1})
	if err != nil || result.Failed() > 0 {
		t.Fatalf("load: %v %+v", err, result)
	}
	if result.Register.Skipped != users {
		t.Fatalf("registered users skipped: %d, want %d", result.Register.Skipped, users)
	}
	return result, follows.Load(), composes.Load()
}

// TestRerunRecomposesAfterRedisFlush: a flushed Redis keeps user timelines
// (MongoDB has them) but empties home timelines. A re-run must compose
// again for every user, so home timelines fill, yet skip the follows,
// which live in MongoDB; a re-run of a complete load sends neither.
func TestRerunRecomposesAfterRedisFlush(t *testing.T) {
	planned := 0
	for _, posts := range planPosts(1, 12, 2) {
		planned += len(posts)
	}
	flushed, follows, composes := rerunAgainst(t, true, false)
	if follows != 0 || flushed.Follow.Skipped == 0 {
		t.Errorf("after a Redis flush %d follows were sent (%+v), want them skipped: every user timeline has posts", follows, flushed.Follow)
	}
	if composes != int64(planned) || flushed.Compose.OK != int64(planned) {
		t.Errorf("after a Redis flush %d composes were sent, want all %d planned: home timelines are empty", composes, planned)
	}
	complete, follows, composes := rerunAgainst(t, true, true)
	if follows != 0 || composes != 0 || complete.Compose.Skipped != int64(planned) {
		t.Errorf("a re-run of a complete load sent %d follows and %d composes (%+v), want none", follows, composes, complete.Compose)
	}
	fresh, follows, composes := rerunAgainst(t, false, false)
	if follows != int64(2*len(mustGraph(t).Edges)) || composes != int64(planned) || fresh.Compose.Skipped != 0 {
		t.Errorf("a load with no posts yet sent %d follows and %d composes, want every one", follows, composes)
	}
}

func mustGraph(t *testing.T) Graph {
	t.Helper()
	g, err := Generate(12, EdgesFor(12), DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRerunRecomposesWhenHomeTimelinesFallShort: a re-run interrupted while
// composing after a Redis flush leaves every home timeline with some posts
// but fewer than one per friend; the next run must compose for every user,
// since the missing copies are the friends' posts, not the user's own.
func TestRerunRecomposesWhenHomeTimelinesFallShort(t *testing.T) {
	planned := 0
	for _, posts := range planPosts(1, 12, 2) {
		planned += len(posts)
	}
	result, follows, composes := rerunWith(t, true, true, true)
	if follows != 0 || composes != int64(planned) || result.Compose.Skipped != 0 {
		t.Errorf("home timelines short of one post per friend: %d follows and %d composes sent (%+v), want no follow and all %d composes", follows, composes, result.Compose, planned)
	}
}
