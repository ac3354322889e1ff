//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
)

const (
	replayUsers = 100
	// loaderConcurrency is init_social_graph.py's: its aiohttp connector
	// allows 200 connections.
	loaderConcurrency = 200
	wrk2Connections   = 32
)

// initScript is what init_social_graph.py sends for a graph, drawn up front,
// with what it leaves behind to check reads against.
type initScript struct {
	register, follow, compose []url.Values
	// postsBy counts posts per author; mentioned holds the registered
	// users some post mentions; friends lists each user's friends.
	postsBy   map[int]int
	mentioned map[int]bool
	friends   [][]int
}

// drawInitScript replays the script literally, its off-by-one included: it
// registers 0..N-1, follows both ways along every edge by username, and
// composes 0..20 posts as user i+1 for each i (so user 0 posts nothing and
// the unregistered user N does), mentioning users drawn from 0..N
// inclusive. Bodies are form-encoded, as aiohttp sends a dict.
func drawInitScript(rng *rand.Rand, graph dataset.Graph) initScript {
	n := graph.Users
	s := initScript{postsBy: map[int]int{}, mentioned: map[int]bool{}, friends: make([][]int, n)}
	for i := range n {
		id := strconv.Itoa(i)
		s.register = append(s.register, url.Values{
			"first_name": {"first_name_" + id}, "last_name": {"last_name_" + id},
			"username": {"username_" + id}, "password": {"password_" + id}, "user_id": {id},
		})
	}
	for _, e := range graph.Edges {
		a, b := strconv.Itoa(e[0]), strconv.Itoa(e[1])
		s.follow = append(s.follow,
			url.Values{"user_name": {"username_" + a}, "followee_name": {"username_" + b}},
			url.Values{"user_name": {"username_" + b}, "followee_name": {"username_" + a}})
		s.friends[e[0]] = append(s.friends[e[0]], e[1])
		s.friends[e[1]] = append(s.friends[e[1]], e[0])
	}
	const asciiLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for i := range n {
		author := i + 1
		for range rng.IntN(21) {
			text := randomString(rng, asciiLetters+"0123456789", 256)
			for range rng.IntN(6) {
				mentioned := rng.IntN(n + 1)
				if mentioned < n {
					s.mentioned[mentioned] = true
				}
				text += " @username_" + strconv.Itoa(mentioned)
			}
			for range rng.IntN(6) {
				text += " http://" + randomString(rng, "abcdefghijklmnopqrstuvwxyz0123456789", 64)
			}
			var ids, types []string
			for range rng.IntN(6) {
				ids = append(ids, `"`+randomString(rng, "0123456789", 18)+`"`)
				types = append(types, `"png"`)
			}
			s.compose = append(s.compose, url.Values{
				"username": {"username_" + strconv.Itoa(author)}, "user_id": {strconv.Itoa(author)},
				"text": {text}, "media_ids": {"[" + strings.Join(ids, ",") + "]"},
				"media_types": {"[" + strings.Join(types, ",") + "]"}, "post_type": {"0"},
			})
			s.postsBy[author]++
		}
	}
	return s
}

// postForms posts every form to path with workers requests in flight, as
// the script's asyncio tasks do, and returns the answers in order.
func postForms(client *http.Client, base, path string, forms []url.Values, workers int) []answer {
	answers := make([]answer, len(forms))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(forms)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(forms) {
					return
				}
				resp, err := client.Post(base+path, "application/x-www-form-urlencoded", strings.NewReader(forms[i].Encode()))
				if err != nil {
					answers[i] = answer{err: err}
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				answers[i] = answer{status: resp.StatusCode, body: string(body), err: err}
			}
		}()
	}
	wg.Wait()
	return answers
}

// expectAll fails unless every answer is a 2xx with body want (any body
// when want is empty), and logs the phase's count and rate.
func expectAll(t *testing.T, phase string, answers []answer, want string, took time.Duration) {
	t.Helper()
	ok := 0
	var wrong []string
	for i, a := range answers {
		switch {
		case a.err != nil:
			wrong = append(wrong, fmt.Sprintf("#%d: %v", i, a.err))
		case a.status < 200 || a.status > 299:
			wrong = append(wrong, fmt.Sprintf("#%d: %d %q", i, a.status, a.body))
		case want != "" && a.body != want:
			ok++
			wrong = append(wrong, fmt.Sprintf("#%d: %d body %q, want %q", i, a.status, a.body, want))
		default:
			ok++
		}
	}
	t.Logf("%s: %d/%d 2xx in %s (%.0f/s)", phase, ok, len(answers), took.Round(time.Millisecond), float64(len(answers))/took.Seconds())
	if ok != len(answers) || len(wrong) > 0 {
		t.Errorf("%s: %d of %d answers 2xx; first wrong: %v", phase, ok, len(answers), wrong[:min(5, len(wrong))])
	}
}

// checkReads checks each read's answer is a JSON array of whole posts, of
// the full page wherever the timeline certainly holds one: at least
// lower(which, user) posts were loaded into it. While composes run, a page
// may come back short: compose writes the timelines in parallel with
// storing the post (as DeathStarBench does), and a post not stored yet is
// left out; such a page must still hold posts.
func checkReads(t *testing.T, phase string, requests []wireRequest, answers []answer, lower func(which string, user int) int, composing bool) (nonEmpty int) {
	t.Helper()
	problems := 0
	report := func(format string, args ...any) {
		if problems++; problems <= 5 {
			t.Errorf(phase+": "+format, args...)
		}
	}
	for i, r := range requests {
		if r.method != "GET" || answers[i].status != http.StatusOK {
			continue
		}
		var posts []map[string]any
		if err := json.Unmarshal([]byte(answers[i].body), &posts); err != nil {
			report("%s: not a JSON array: %v in %q", r.target, err, answers[i].body)
			continue
		}
		for _, p := range posts {
			if missing := dataset.CheckPost(p); len(missing) > 0 {
				report("%s: post %v: %v", r.target, p["post_id"], missing)
			}
		}
		if len(posts) > 0 {
			nonEmpty++
		}
		want := r.stop - r.start
		if lower(r.label, r.user) >= r.stop && (len(posts) != want && !composing || len(posts) == 0) {
			report("%s: %d posts, want %d: the timeline holds at least %d", r.target, len(posts), want, lower(r.label, r.user))
		}
	}
	return nonEmpty
}

// TestReplayDeathStarBenchClients sends the real tiers what
// DeathStarBench's own clients send: init_social_graph.py's load (200 in
// flight, form-encoded, its i+1 quirk included), then its wrk2 scripts'
// requests with absolute-form targets and unencoded bodies over raw TCP,
// user IDs 0..N-1. Every answer must be a 2xx with the original's body, and
// reads must return the posts the load put there.
func TestReplayDeathStarBenchClients(t *testing.T) {
	s := startStack(t)
	graph, err := dataset.Generate(replayUsers, dataset.EdgesFor(replayUsers), dataset.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 962))
	script := drawInitScript(rng, graph)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: loaderConcurrency}}

	for _, phase := range []struct {
		name, path string
		forms      []url.Values
		want       string
	}{
		{"register", "/wrk2-api/user/register", script.register, "Success!\n"},
		{"follow", "/wrk2-api/user/follow", script.follow, "Success!\n"},
		{"compose", "/wrk2-api/post/compose", script.compose, "Successfully upload post\n"},
	} {
		started := time.Now()
		answers := postForms(client, s.frontend, phase.path, phase.forms, loaderConcurrency)
		expectAll(t, "init_social_graph.py "+phase.name, answers, phase.want, time.Since(started))
		if t.Failed() {
			t.FailNow()
		}
	}

	// What the load left: user timelines of the authors, home timelines of
	// their friends and of the users they mentioned.
	lower := func(which string, user int) int {
		if which == "user-timeline" {
			return script.postsBy[user]
		}
		sum := 0
		for _, f := range script.friends[user] {
			sum += script.postsBy[f]
		}
		return sum
	}
	var firstPages []wireRequest
	for u := range replayUsers {
		firstPages = append(firstPages, readRequest("user-timeline", u, 0, 10), readRequest("home-timeline", u, 0, 10))
	}
	started := time.Now()
	answers := sendRaw(t, s.frontendAddr, wrk2Connections, firstPages)
	expectAll(t, "first pages", answers, "", time.Since(started))
	checkReads(t, "first pages", firstPages, answers, lower, false)
	for i, r := range firstPages {
		empty := strings.TrimSpace(answers[i].body) == "[]"
		want := lower(r.label, r.user) > 0 || (r.label == "home-timeline" && script.mentioned[r.user])
		if empty == want {
			t.Errorf("%s: %q, want posts: %v", r.target, answers[i].body, want)
		}
	}
	if script.postsBy[0] != 0 || strings.TrimSpace(answers[0].body) != "[]" {
		t.Errorf("user 0 composed %d posts and reads %q; the script's i+1 leaves user 0 without posts", script.postsBy[0], answers[0].body)
	}

	mention := regexp.MustCompile(`@username_\d+`)
	composedLater := map[int]int{}
	for _, phase := range []struct {
		name string
		next func(*rand.Rand, int) wireRequest
		n    int
	}{
		{"compose-post.lua", wrk2Compose, 200},
		{"read-home-timeline.lua", func(rng *rand.Rand, users int) wireRequest { return wrk2Read(rng, users, "home-timeline") }, 300},
		{"read-user-timeline.lua", func(rng *rand.Rand, users int) wireRequest { return wrk2Read(rng, users, "user-timeline") }, 300},
		{"mixed-workload.lua", wrk2Mixed, 600},
	} {
		requests := make([]wireRequest, phase.n)
		for i := range requests {
			requests[i] = phase.next(rng, replayUsers)
		}
		if r := requests[0]; r.method == "POST" && (!strings.Contains(r.body, " http://") || !mention.MatchString(r.body) || !strings.Contains(r.body, `media_ids=["`)) {
			t.Fatalf("%s: the body is not the script's unencoded form: %q", phase.name, r.body)
		}
		started := time.Now()
		answers := sendRaw(t, s.frontendAddr, wrk2Connections, requests)
		expectAll(t, phase.name, answers, "", time.Since(started))
		composes, composed := 0, 0
		for i, r := range requests {
			if r.method == "POST" {
				composes++
				if answers[i].body == "Successfully upload post\n" {
					composed++
					composedLater[r.user]++
				}
			}
		}
		if composed != composes {
			t.Errorf("%s: %d of %d composes answered %q", phase.name, composed, composes, "Successfully upload post\n")
		}
		nonEmpty := checkReads(t, phase.name, requests, answers, lower, composes > 0)
		t.Logf("%s: %d composes, %d reads with posts", phase.name, composes, nonEmpty)
		if reads := phase.n - composes; reads > 0 && nonEmpty == 0 {
			t.Errorf("%s: none of %d reads returned a post", phase.name, reads)
		}
	}

	// With Redis flushed, every user timeline comes back whole from
	// FerretDB: the loader's concurrent composes of one user lost no post.
	flushRedis(t, s.redisAddr)
	var whole []wireRequest
	for u := range replayUsers + 1 { // user N: the script's i+1 composed as it
		whole = append(whole, readRequest("user-timeline", u, 0, 100))
	}
	started = time.Now()
	answers = sendRaw(t, s.frontendAddr, wrk2Connections, whole)
	expectAll(t, "user timelines from FerretDB", answers, "", time.Since(started))
	for i, r := range whole {
		var posts []map[string]any
		json.Unmarshal([]byte(answers[i].body), &posts)
		if want := script.postsBy[r.user] + composedLater[r.user]; len(posts) != want {
			t.Errorf("user timeline of %d after a Redis flush: %d posts, want the %d composed", r.user, len(posts), want)
		}
	}
}
