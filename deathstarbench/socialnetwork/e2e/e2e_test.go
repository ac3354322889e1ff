//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
	"github.com/orchbench/orchbench/harness/testutil"
)

func TestSocialNetworkEndToEnd(t *testing.T) {
	s := startStack(t)
	frontend, memcachedAddr := s.frontend, s.memcachedAddr

	client := &http.Client{Timeout: 30 * time.Second}
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, frontend+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	mustCall := func(method, path, body string, wantBody string) {
		t.Helper()
		status, got := call(method, path, body)
		if status != 200 || got != wantBody {
			t.Fatalf("%s %s: %d %q, want 200 %q", method, path, status, got, wantBody)
		}
	}

	for _, id := range []string{"1", "2", "3", "4"} {
		form := url.Values{"first_name": {"f" + id}, "last_name": {"l" + id}, "username": {"username_" + id}, "password": {"pw" + id}, "user_id": {id}}
		mustCall("POST", "/wrk2-api/user/register", form.Encode(), "Success!\n")
	}
	// Bad input through the real stores: FerretDB reports the duplicate
	// key, and the unknown-user check queries it by user_id.
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/wrk2-api/user/register", "first_name=a&last_name=b&username=username_1&password=x&user_id=1",
			"409 User registration failure: User username_1 already existed\n"},
		{"POST", "/wrk2-api/user/login", "username=nobody&password=x", "404 User login failure: User: nobody doesn't exist\n"},
		{"POST", "/wrk2-api/user/login", "username=username_1&password=wrong", "401 User login failure: Incorrect username or password\n"},
		{"POST", "/wrk2-api/user/follow", "user_name=username_1&followee_name=nobody", "404 Follow Failed: User: nobody doesn't exist\n"},
		{"GET", "/wrk2-api/user-timeline/read?user_id=999&start=0&stop=10", "", "404 Get user-timeline failure: User with user_id 999 doesn't exist\n"},
		{"GET", "/wrk2-api/home-timeline/read?user_id=4&start=5&stop=1", "", "400 Get home-timeline failure: stop 1 is less than start 5\n"},
		{"GET", "/wrk2-api/home-timeline/read?user_id=4&start=0&stop=10", "", "200 []\n"},
	} {
		if status, body := call(c.method, c.path, c.body); fmt.Sprintf("%d %s", status, body) != c.want {
			t.Fatalf("%s %s: %d %q, want %q", c.method, c.path, status, body, c.want)
		}
	}
	mustCall("POST", "/wrk2-api/user/follow", "user_name=username_2&followee_name=username_1", "Success!\n")
	mustCall("POST", "/wrk2-api/user/follow", "user_id=3&followee_id=1", "Success!\n")
	if status, body := call("POST", "/wrk2-api/user/login", "username=username_1&password=pw1"); status != 200 || strings.Count(body, ".") != 2 {
		t.Fatalf("login: %d %q", status, body)
	}
	mustCall("POST", "/wrk2-api/post/compose",
		`username=username_1&user_id=1&text=hi @username_4 look http://example.com/e2e?x=1&media_ids=["987654321098765432"]&media_types=["png"]&post_type=0`,
		"Successfully upload post\n")

	check := func(which, userID string) map[string]any {
		t.Helper()
		status, body := call("GET", "/wrk2-api/"+which+"/read?user_id="+userID+"&start=0&stop=10", "")
		var posts []map[string]any
		if status != 200 || json.Unmarshal([]byte(body), &posts) != nil || len(posts) != 1 {
			t.Fatalf("%s of %s: %d %q, want one post", which, userID, status, body)
		}
		p := posts[0]
		if problems := dataset.CheckPost(p); len(problems) > 0 {
			t.Fatalf("%s of %s: %v", which, userID, problems)
		}
		mentions, urls, media := p["user_mentions"].([]any), p["urls"].([]any), p["media"].([]any)
		if len(mentions) != 1 || mentions[0].(map[string]any)["user_id"] != "4" ||
			len(urls) != 1 || urls[0].(map[string]any)["expanded_url"] != "http://example.com/e2e?x=1" ||
			len(media) != 1 || media[0].(map[string]any)["media_id"] != "987654321098765432" ||
			p["creator"].(map[string]any)["username"] != "username_1" ||
			!strings.Contains(p["text"].(string), urls[0].(map[string]any)["shortened_url"].(string)) {
			t.Fatalf("%s of %s: wrong post %v", which, userID, p)
		}
		return p
	}
	first := check("home-timeline", "2")
	check("home-timeline", "3")
	check("home-timeline", "4") // mentioned, not following
	check("user-timeline", "1")

	// With memcached emptied, posts must come back from FerretDB intact.
	testutil.FlushMemcached(t, memcachedAddr)
	if again := check("home-timeline", "2"); again["post_id"] != first["post_id"] || again["text"] != first["text"] {
		t.Fatalf("post from FerretDB differs: %v vs %v", again, first)
	}
	// With Redis emptied too, the user timeline comes back from its MongoDB
	// copy (home timelines, Redis-only in DeathStarBench too, do not), and
	// the read puts it back in Redis.
	flushRedis(t, s.redisAddr)
	if again := check("user-timeline", "1"); again["post_id"] != first["post_id"] {
		t.Fatalf("user timeline from FerretDB: %v, want post %v", again, first["post_id"])
	}
	if n := redisCard(t, s.redisAddr, "user-timeline:1"); n != 1 {
		t.Fatalf("Redis holds %d posts of user 1 after the read, want the 1 refilled", n)
	}

	// A small dataset through the loader, then the verifier.
	graph, err := dataset.Generate(40, dataset.EdgesFor(40), 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	loadStarted := time.Now()
	result, err := dataset.Load(ctx, dataset.LoadOptions{Frontend: frontend, Graph: graph, PostsPerUser: 2, Concurrency: 8, Seed: 1})
	if err != nil || result.Failed() > 0 {
		t.Fatalf("load: %v, %+v", err, result)
	}
	t.Logf("loaded 40 users, %d follows, %d posts in %s (4 users pre-registered: %d skipped)",
		result.Follow.OK, result.Compose.OK, time.Since(loadStarted).Round(time.Millisecond), result.Register.Skipped)
	verifyOpts := dataset.VerifyOptions{Frontend: frontend, Users: 40, Samples: 10, Seed: 2, DatasetSeed: 1}
	verified, err := dataset.Verify(ctx, verifyOpts)
	if err != nil || !verified.OK() {
		t.Fatalf("verify: %v %v", err, verified.Problems)
	}

	// As the harness does after a Redis restart: the verifier refuses the
	// emptied home timelines; a re-run of the loader skips the follows (in
	// MongoDB) and composes again, since user timelines survive in MongoDB
	// but home timelines do not; then the verifier passes.
	flushRedis(t, s.redisAddr)
	if refused, err := dataset.Verify(ctx, verifyOpts); err != nil || refused.OK() || !strings.Contains(strings.Join(refused.Problems, "\n"), "home-timeline of user ") {
		t.Fatalf("verify after a Redis flush: %v, problems %v; want empty home timelines named", err, refused.Problems)
	}
	reload, err := dataset.Load(ctx, dataset.LoadOptions{Frontend: frontend, Graph: graph, PostsPerUser: 2, Concurrency: 8, Seed: 1})
	if err != nil || reload.Failed() > 0 || reload.Follow.OK != 0 || reload.Compose.OK == 0 {
		t.Fatalf("reload after a Redis flush: %v, %+v; want follows skipped and posts composed", err, reload)
	}
	if verified, err := dataset.Verify(ctx, verifyOpts); err != nil || !verified.OK() {
		t.Fatalf("verify after the reload: %v %v", err, verified.Problems)
	}
}
