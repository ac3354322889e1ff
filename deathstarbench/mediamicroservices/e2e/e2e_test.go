//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices"
	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/testutil"
)

// The composes of the acceptance check: composeUsers users and the first
// composeTitles titles, so that lists hold several reviews written at once.
const (
	composes           = 200
	composeConcurrency = 16
	composeUsers       = 50
	composeTitles      = 60
)

// TestMediaMicroservicesEndToEnd runs its parts in order on one stack:
// each needs what the ones before wrote, and a full load is too long to
// repeat per part.
func TestMediaMicroservicesEndToEnd(t *testing.T) {
	s := startStack(t)
	l := newLedger()
	seed := uint64(time.Now().UnixNano())
	t.Logf("composes drawn with seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	for _, part := range []struct {
		name string
		run  func(t *testing.T, s *stack)
	}{
		{"load", testLoad},
		{"compose", func(t *testing.T, s *stack) { testCompose(t, s, l, rng) }},
		{"durability", func(t *testing.T, s *stack) { testDurability(t, s, l, rng) }},
		{"loadgen", testLoadgen},
	} {
		if !t.Run(part.name, func(t *testing.T) { part.run(t, s.on(t)) }) {
			t.Fatalf("%s failed: the parts after it need what it does", part.name)
		}
	}
}

// testLoad loads the full dataset through the front end, verifies every
// user and movie, and loads again: the second load finds everything
// registered and changes nothing.
func testLoad(t *testing.T, s *stack) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	load := func(which string) dataset.LoadResult {
		t.Helper()
		began := time.Now()
		res, err := dataset.Load(ctx, dataset.LoadOptions{Frontend: s.frontend, Progress: func(line string) { t.Log(line) }})
		took := time.Since(began)
		if err != nil {
			t.Fatalf("the %s load, after %s: %v", which, took.Round(time.Millisecond), err)
		}
		t.Logf("the %s load: %d requests in %s (%.0f/s)", which, res.Requests(), took.Round(time.Millisecond),
			float64(res.Requests())/took.Seconds())
		if want := dataset.Requests(dataset.DefaultUsers); res.Requests() != want || res.Failed() != 0 {
			t.Fatalf("the %s load sent %d requests, %d failed; want %d, none failed", which, res.Requests(), res.Failed(), want)
		}
		return res
	}
	verify := func(when string) {
		t.Helper()
		began := time.Now()
		res, err := dataset.Verify(ctx, dataset.VerifyOptions{Frontend: s.frontend})
		if err != nil {
			t.Fatalf("dataset.Verify %s: %v", when, err)
		}
		t.Logf("dataset.Verify %s: %d checks passed in %s", when, len(res.Checks), time.Since(began).Round(time.Millisecond))
	}

	for _, p := range load("first").Phases {
		if p.Present != 0 || p.OK != p.Total {
			t.Errorf("first load, phase %s: %d written, %d already there, of %d", p.Name, p.OK, p.Present, p.Total)
		}
	}
	verify("after the load")
	for _, p := range load("second").Phases {
		// Registrations answer "already existed"; the writes are upserts.
		registers := p.Name == "users" || p.Name == "movies"
		if registers && p.Present != p.Total || !registers && p.OK != p.Total {
			t.Errorf("second load, phase %s: %d written, %d already there, of %d", p.Name, p.OK, p.Present, p.Total)
		}
	}
	verify("after loading twice")
}

// testCompose is the acceptance: reviews composed concurrently
// through the front end are each stored once, in review storage and in
// their user's and movie's lists, newest first, and the movies' rating
// tallies add up what was sent; a compose the original refuses stores
// nothing.
func testCompose(t *testing.T, s *stack, l *ledger, rng *rand.Rand) {
	composeAll(t, s, l, draw(rng, composes, composeUsers, composeTitles, "compose"), composeConcurrency)
	if n := checkStored(t, s, l); n != composes {
		t.Errorf("%d reviews read back, want %d", n, composes)
	}
	checkRatings(t, s, l)
	t.Logf("%d reviews by %d users of %d movies read back", composes, len(l.userIDs), len(l.ratings))

	// A title outside the ledger's: a compose failing on its user still
	// tallies its rating, as the original's does (movie-id forwards it to
	// rating before anyone knows the user is missing).
	valid := url.Values{"title": {untouchedTitle(composeTitles)}, "text": {"refused"}, "username": {"username_1"},
		"password": {"password_1"}, "rating": {"5"}}
	with := func(field string, value ...string) url.Values {
		form := url.Values{}
		for k, v := range valid {
			form[k] = v
		}
		form[field] = value
		if len(value) == 0 {
			delete(form, field)
		}
		return form
	}
	for _, c := range []struct {
		what string
		form url.Values
		want string
	}{
		{"an unknown title", with("title", "orchbench: no such movie"), "orchbench: no such movie"},
		{"an unknown user", with("username", "username_1000001"), "username_1000001"},
	} {
		if status, body := s.compose(c.form); status != http.StatusInternalServerError || !strings.Contains(body, c.want) {
			t.Errorf("a compose with %s: %d %q, want 500 naming %q", c.what, status, body, c.want)
		}
	}
	for _, field := range []string{"title", "text", "username", "password", "rating"} {
		for _, form := range []url.Values{with(field), with(field, "")} {
			if status, body := s.compose(form); status != http.StatusBadRequest || body != "Incomplete arguments\n" {
				t.Errorf("a compose without %s (%s): %d %q, want 400 %q", field, form.Encode(), status, body, "Incomplete arguments\n")
			}
		}
	}
	if ids := storedReviewIDs(t, s); len(ids) != composes {
		t.Errorf("after the refused composes review storage holds %d reviews, want %d", len(ids), composes)
	}
}

// testDurability restarts Redis (empty: it keeps nothing) and flushes
// memcached: every list is still whole, read from MongoDB and written back
// to Redis, while the ratings, kept only in Redis as the original keeps
// them, count again from zero. Then user-review is killed and started
// again: reads and composes go on.
func testDurability(t *testing.T, s *stack, l *ledger, rng *rand.Rand) {
	s.restartRedis()
	testutil.FlushMemcached(t, s.memcachedAddr)
	l.forgetRatings()
	anyUser := "/orchbench/user-reviews?user_id=" + fmt.Sprint(l.userIDs[l.reviews[0].user])
	s.waitAnswers(anyUser)
	began := time.Now()
	n := checkStored(t, s, l)
	t.Logf("after Redis restarted empty and memcached was flushed, %d reviews read back from MongoDB in %s",
		n, time.Since(began).Round(time.Millisecond))
	lists := len(l.userIDs) + len(distinctMovies(l))
	if reply := testutil.RedisCommand(t, s.redisAddr, "DBSIZE"); reply != fmt.Sprintf(":%d", lists) {
		t.Errorf("redis holds %s keys after the reads, want the %d lists read", reply, lists)
	}
	composeAll(t, s, l, draw(rng, 20, composeUsers, composeTitles, "after-redis"), 4)
	checkRatings(t, s, l)

	s.kill(mediamicroservices.ServiceUserReview)
	if status, body := s.get(anyUser); status == http.StatusOK {
		t.Errorf("a user's reviews with user-review down: %d %q", status, body)
	}
	// Down for a while, as a restart by an orchestrator is: the callers'
	// pools check a connection for a peer's close only when it has been
	// idle a second (internal/rpc's checkIdleAfter), so a process back
	// sooner fails a call on each connection left from before.
	time.Sleep(2 * time.Second)
	s.startServices(mediamicroservices.ServiceUserReview)
	s.waitAnswers(anyUser)
	composeAll(t, s, l, draw(rng, 20, composeUsers, composeTitles, "after-user-review"), 4)
	if n := checkStored(t, s, l); n != composes+40 {
		t.Errorf("%d reviews read back after user-review restarted, want %d", n, composes+40)
	}
	checkRatings(t, s, l)
}

// untouchedTitle is a title of a movie none of the first n titles names.
func untouchedTitle(n int) string {
	for i := len(dataset.Titles) - 1; i >= 0; i-- {
		if !slices.Contains(dataset.Titles[:n], dataset.Titles[i]) {
			return dataset.Titles[i]
		}
	}
	panic("every title is among the first")
}

func distinctMovies(l *ledger) map[string]bool {
	movies := map[string]bool{}
	for _, c := range l.reviews {
		movies[c.movieID] = true
	}
	return movies
}
