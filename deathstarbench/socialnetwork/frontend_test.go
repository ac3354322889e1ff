package socialnetwork_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork"
	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/dataset"
	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/workload"
)

// startInMemory runs all twelve services in this process, each on its own
// loopback port and calling the others over real Thrift, with in-memory
// storage.
func startInMemory(t *testing.T) string {
	t.Helper()
	running, err := socialnetwork.Start(context.Background(), socialnetwork.ServiceNames(), nil, socialnetwork.Settings{
		StorageMode: "memory",
		JWTSecret:   "test-secret",
		MachineID:   1,
		RPCTimeout:  5 * time.Second,
		PoolSize:    8,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(running.Stop)
	return "http://" + running.Addrs[socialnetwork.ServiceFrontend]
}

type response struct {
	status int
	body   string
	header http.Header
}

var client = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func post(t *testing.T, target, body string) response {
	t.Helper()
	resp, err := client.Post(target, "application/x-www-form-urlencoded", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(data), resp.Header}
}

func get(t *testing.T, target string) response {
	t.Helper()
	resp, err := client.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(data), resp.Header}
}

func expect(t *testing.T, what string, got response, status int, body string) {
	t.Helper()
	if got.status != status || got.body != body {
		t.Fatalf("%s: got %d %q, want %d %q", what, got.status, got.body, status, body)
	}
}

func register(t *testing.T, frontend, id string) {
	t.Helper()
	form := url.Values{"first_name": {"f" + id}, "last_name": {"l" + id}, "username": {"username_" + id}, "password": {"pw" + id}, "user_id": {id}}
	expect(t, "register "+id, post(t, frontend+"/wrk2-api/user/register", form.Encode()), 200, "Success!\n")
}

func readTimeline(t *testing.T, frontend, which, userID string) []map[string]any {
	t.Helper()
	got := get(t, frontend+"/wrk2-api/"+which+"/read?user_id="+userID+"&start=0&stop=10")
	if got.status != 200 || !strings.HasPrefix(got.header.Get("Content-Type"), "application/json") {
		t.Fatalf("%s of %s: %d %s %q", which, userID, got.status, got.header.Get("Content-Type"), got.body)
	}
	var posts []map[string]any
	if err := json.Unmarshal([]byte(got.body), &posts); err != nil {
		t.Fatalf("%s of %s: %v in %q", which, userID, err, got.body)
	}
	return posts
}

func TestFrontendParameterHandling(t *testing.T) {
	frontend := startInMemory(t)

	expect(t, "register without password", post(t, frontend+"/wrk2-api/user/register", "first_name=a&last_name=b&username=c&user_id=1"), 400, "Incomplete arguments\n")
	expect(t, "register with bad user_id", post(t, frontend+"/wrk2-api/user/register", "first_name=a&last_name=b&username=c&password=d&user_id=x"), 400, "Incomplete arguments\n")
	for _, id := range []string{"1", "2", "3"} {
		register(t, frontend, id)
	}
	expect(t, "register again", post(t, frontend+"/wrk2-api/user/register", "first_name=a&last_name=b&username=username_1&password=d&user_id=9"),
		409, "User registration failure: User username_1 already existed\n")

	expect(t, "follow by name", post(t, frontend+"/wrk2-api/user/follow", "user_name=username_2&followee_name=username_1"), 200, "Success!\n")
	expect(t, "follow by id", post(t, frontend+"/wrk2-api/user/follow", "user_id=3&followee_id=1"), 200, "Success!\n")
	expect(t, "follow without followee", post(t, frontend+"/wrk2-api/user/follow", "user_name=username_2"), 400, "Incomplete arguments\n")
	expect(t, "follow unknown user", post(t, frontend+"/wrk2-api/user/follow", "user_name=username_2&followee_name=nobody"), 404, "Follow Failed: User: nobody doesn't exist\n")

	// Login: the API form answers the token; the browser form redirects.
	got := post(t, frontend+"/wrk2-api/user/login", "username=username_1&password=pw1")
	if got.status != 200 || strings.Count(strings.TrimSpace(got.body), ".") != 2 || !strings.Contains(got.header.Get("Set-Cookie"), "login_token=") {
		t.Fatalf("login: %d %q cookie %q", got.status, got.body, got.header.Get("Set-Cookie"))
	}
	claims, err := socialnetwork.VerifyToken(strings.TrimSpace(got.body), []byte("test-secret"), time.Now())
	if err != nil || claims.UserID != "1" || claims.Username != "username_1" {
		t.Fatalf("login token claims %+v, %v", claims, err)
	}
	if got := post(t, frontend+"/api/user/login", "username=username_1&password=pw1"); got.status != http.StatusFound || got.header.Get("Location") != "/main.html?username=username_1" {
		t.Fatalf("browser login: %d location %q", got.status, got.header.Get("Location"))
	}
	expect(t, "login with wrong password", post(t, frontend+"/wrk2-api/user/login", "username=username_1&password=nope"), 401, "User login failure: Incorrect username or password\n")
	expect(t, "login without password", post(t, frontend+"/wrk2-api/user/login", "username=username_1"), 400, "Incomplete arguments\n")

	// Compose: raw (not percent-encoded) body exactly as the wrk2 script sends it.
	raw := "username=username_1&user_id=1&text=hello @username_3 @nobody see http://example.com/x?a=b" +
		`&media_ids=["123456789012345678","42"]&media_types=["png","jpg"]&post_type=0`
	expect(t, "compose", post(t, frontend+"/wrk2-api/post/compose", raw), 200, "Successfully upload post\n")
	expect(t, "compose without text", post(t, frontend+"/wrk2-api/post/compose", "username=username_1&user_id=1&post_type=0"), 400, "Incomplete arguments\n")
	expect(t, "compose with bad media", post(t, frontend+"/wrk2-api/post/compose", "username=username_1&user_id=1&text=t&post_type=0&media_ids=[x&media_types=[]"), 400, "Incomplete arguments\n")
	expect(t, "compose with unequal media lists", post(t, frontend+"/wrk2-api/post/compose", `username=username_1&user_id=1&text=t&post_type=0&media_ids=["1"]&media_types=[]`),
		400, "compost_post failure: The lengths of media_id list and media_type list are not equal\n")

	expect(t, "timeline without stop", get(t, frontend+"/wrk2-api/home-timeline/read?user_id=2&start=0"), 400, "Incomplete arguments\n")
	expect(t, "reversed page", get(t, frontend+"/wrk2-api/user-timeline/read?user_id=2&start=5&stop=1"), 400, "Get user-timeline failure: stop 1 is less than start 5\n")

	home := readTimeline(t, frontend, "home-timeline", "2")
	if len(home) != 1 {
		t.Fatalf("follower's home timeline has %d posts, want 1", len(home))
	}
	p := home[0]
	if problems := dataset.CheckPost(p); len(problems) > 0 {
		t.Fatalf("post fields: %v in %v", problems, p)
	}
	creator := p["creator"].(map[string]any)
	mentions := p["user_mentions"].([]any)
	urls := p["urls"].([]any)
	media := p["media"].([]any)
	if creator["user_id"] != "1" || creator["username"] != "username_1" || p["post_type"] != float64(0) {
		t.Fatalf("creator/post_type: %v", p)
	}
	if len(mentions) != 1 || mentions[0].(map[string]any)["username"] != "username_3" || mentions[0].(map[string]any)["user_id"] != "3" {
		t.Fatalf("mentions (unknown @nobody dropped): %v", mentions)
	}
	shortURL := urls[0].(map[string]any)["shortened_url"].(string)
	if len(urls) != 1 || urls[0].(map[string]any)["expanded_url"] != "http://example.com/x?a=b" ||
		!strings.HasPrefix(shortURL, socialnetwork.ShortURLPrefix) || !strings.Contains(p["text"].(string), shortURL) {
		t.Fatalf("urls / text: %v", p)
	}
	if len(media) != 2 || media[0].(map[string]any)["media_id"] != "123456789012345678" || media[1].(map[string]any)["media_type"] != "jpg" {
		t.Fatalf("media: %v", media)
	}
	// Mentioned user 3 follows 1 anyway; user 1's own timeline has the post.
	if got := readTimeline(t, frontend, "user-timeline", "1"); len(got) != 1 || got[0]["post_id"] != p["post_id"] {
		t.Fatalf("author's user timeline: %v", got)
	}
	if got := readTimeline(t, frontend, "home-timeline", "1"); len(got) != 0 {
		t.Fatalf("author's home timeline should be empty, got %v", got)
	}

	// After unfollowing, new posts stop reaching the former follower.
	expect(t, "unfollow", post(t, frontend+"/wrk2-api/user/unfollow", "user_name=username_2&followee_name=username_1"), 200, "Success!\n")
	expect(t, "compose 2", post(t, frontend+"/wrk2-api/post/compose", "username=username_1&user_id=1&text=second&post_type=0"), 200, "Successfully upload post\n")
	if got := readTimeline(t, frontend, "home-timeline", "2"); len(got) != 1 {
		t.Fatalf("unfollowed reader got %d posts, want the 1 from before", len(got))
	}
	if got := readTimeline(t, frontend, "home-timeline", "3"); len(got) != 2 || got[0]["text"] != "second" {
		t.Fatalf("follower's home timeline newest first: %v", got)
	}
	// Paging: start/stop index newest first.
	if got := readTimeline(t, frontend, "user-timeline", "1"); len(got) != 2 {
		t.Fatalf("user timeline has %d posts, want 2", len(got))
	}
	page := get(t, frontend+"/wrk2-api/user-timeline/read?user_id=1&start=1&stop=2")
	var paged []map[string]any
	json.Unmarshal([]byte(page.body), &paged)
	if len(paged) != 1 || paged[0]["post_id"] != p["post_id"] {
		t.Fatalf("page 1..2: %s", page.body)
	}
}

// TestFrontendRejectsBadInput: every bad request gets a 4xx and a message
// that says what was wrong, never a 500, a 200 or an empty body.
func TestFrontendRejectsBadInput(t *testing.T) {
	frontend := startInMemory(t)
	register(t, frontend, "1")
	register(t, frontend, "2")
	expect(t, "compose", post(t, frontend+"/wrk2-api/post/compose", "username=username_1&user_id=1&text=first&post_type=0"), 200, "Successfully upload post\n")

	long := strings.Repeat("x", socialnetwork.MaxTextBytes+1)
	compose := func(text, extra string) string {
		return url.Values{"username": {"username_1"}, "user_id": {"1"}, "text": {text}, "post_type": {"0"}}.Encode() + extra
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		message                  string // the whole body
	}{
		{"register twice", "POST", "/wrk2-api/user/register", "first_name=a&last_name=b&username=username_1&password=x&user_id=7",
			409, "User registration failure: User username_1 already existed\n"},
		{"register with malformed form", "POST", "/wrk2-api/user/register", "first_name=%zz&last_name=b&username=c&password=d&user_id=7",
			400, "Incomplete arguments\n"},
		{"register with non-numeric user_id", "POST", "/wrk2-api/user/register", "first_name=a&last_name=b&username=c&password=d&user_id=seven",
			400, "Incomplete arguments\n"},

		{"login as unknown user", "POST", "/wrk2-api/user/login", "username=nobody&password=x",
			404, "User login failure: User: nobody doesn't exist\n"},
		{"browser login as unknown user", "POST", "/api/user/login", "username=nobody&password=x",
			404, "User login failure: User: nobody doesn't exist\n"},
		{"login with wrong password", "POST", "/wrk2-api/user/login", "username=username_1&password=wrong",
			401, "User login failure: Incorrect username or password\n"},

		{"follow unknown followee", "POST", "/wrk2-api/user/follow", "user_name=username_1&followee_name=nobody",
			404, "Follow Failed: User: nobody doesn't exist\n"},
		{"unknown user follows", "POST", "/wrk2-api/user/follow", "user_name=nobody&followee_name=username_1",
			404, "Follow Failed: User: nobody doesn't exist\n"},
		{"unfollow unknown followee", "POST", "/wrk2-api/user/unfollow", "user_name=username_1&followee_name=nobody",
			404, "Unfollow Failed: User: nobody doesn't exist\n"},
		{"follow with non-numeric ids", "POST", "/wrk2-api/user/follow", "user_id=1&followee_id=two",
			400, "Incomplete arguments\n"},

		{"compose over the text limit", "POST", "/wrk2-api/post/compose", compose(long, ""),
			400, fmt.Sprintf("compost_post failure: text of %d bytes is over the limit of %d bytes\n", len(long), socialnetwork.MaxTextBytes)},
		{"compose with malformed form", "POST", "/wrk2-api/post/compose", "username=username_1&user_id=1&text=%G0&post_type=0",
			400, "Incomplete arguments\n"},
		{"compose with non-numeric user_id", "POST", "/wrk2-api/post/compose", "username=username_1&user_id=one&text=t&post_type=0",
			400, "Incomplete arguments\n"},
		{"compose with unknown post_type", "POST", "/wrk2-api/post/compose", "username=username_1&user_id=1&text=t&post_type=7",
			400, "compost_post failure: unknown post_type 7 (want 0 to 3)\n"},
		{"compose with negative post_type", "POST", "/wrk2-api/post/compose", "username=username_1&user_id=1&text=t&post_type=-1",
			400, "compost_post failure: unknown post_type -1 (want 0 to 3)\n"},
		{"compose with media_ids not JSON", "POST", "/wrk2-api/post/compose", compose("t", `&media_ids=["1"&media_types=["png"]`),
			400, "Incomplete arguments\n"},
		{"compose with non-numeric media id", "POST", "/wrk2-api/post/compose", compose("t", `&media_ids=["abc"]&media_types=["png"]`),
			400, "Incomplete arguments\n"},
		{"compose with media_types not strings", "POST", "/wrk2-api/post/compose", compose("t", `&media_ids=["1"]&media_types=[1]`),
			400, "Incomplete arguments\n"},
		{"compose with more types than ids", "POST", "/wrk2-api/post/compose", compose("t", `&media_ids=["1"]&media_types=["png","jpg"]`),
			400, "compost_post failure: The lengths of media_id list and media_type list are not equal\n"},

		{"user timeline with stop < start", "GET", "/wrk2-api/user-timeline/read?user_id=1&start=5&stop=1", "",
			400, "Get user-timeline failure: stop 1 is less than start 5\n"},
		{"home timeline with stop < start", "GET", "/wrk2-api/home-timeline/read?user_id=1&start=5&stop=1", "",
			400, "Get home-timeline failure: stop 1 is less than start 5\n"},
		{"user timeline with negative start", "GET", "/wrk2-api/user-timeline/read?user_id=1&start=-1&stop=1", "",
			400, "Get user-timeline failure: start -1 is negative\n"},
		{"home timeline page over the limit", "GET", "/wrk2-api/home-timeline/read?user_id=1&start=0&stop=5000", "",
			400, "Get home-timeline failure: page of 5000 posts is over the limit of 1000\n"},
		{"timeline with non-numeric user_id", "GET", "/wrk2-api/user-timeline/read?user_id=x&start=0&stop=10", "",
			400, "Incomplete arguments\n"},
		{"user timeline of unknown user", "GET", "/wrk2-api/user-timeline/read?user_id=999&start=0&stop=10", "",
			404, "Get user-timeline failure: User with user_id 999 doesn't exist\n"},
		{"home timeline of unknown user", "GET", "/wrk2-api/home-timeline/read?user_id=999&start=0&stop=10", "",
			404, "Get home-timeline failure: User with user_id 999 doesn't exist\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got response
			if c.method == "GET" {
				got = get(t, frontend+c.path)
			} else {
				got = post(t, frontend+c.path, c.body)
			}
			if got.status != c.status || got.body != c.message {
				t.Fatalf("got %d %q, want %d %q", got.status, got.body, c.status, c.message)
			}
			if got.header.Get("Content-Type") != "text/plain" {
				t.Fatalf("Content-Type %q, want text/plain", got.header.Get("Content-Type"))
			}
		})
	}

	// The limit is inclusive: a text of exactly MaxTextBytes is a post.
	expect(t, "compose at the text limit", post(t, frontend+"/wrk2-api/post/compose", compose(long[1:], "")), 200, "Successfully upload post\n")
	if got := readTimeline(t, frontend, "user-timeline", "1"); len(got) != 2 || got[0]["text"] != long[1:] {
		t.Fatalf("user timeline after the post at the limit has %d posts", len(got))
	}

	// A registered user without posts, or whose home timeline nobody has
	// written to, still reads an empty timeline.
	for _, which := range []string{"user-timeline", "home-timeline"} {
		expect(t, which+" of a user without posts", get(t, frontend+"/wrk2-api/"+which+"/read?user_id=2&start=0&stop=10"), 200, "[]\n")
	}
	// A page past the end is not checked (see Frontend.readTimeline), for
	// registered and unknown users alike.
	expect(t, "page past the end", get(t, frontend+"/wrk2-api/user-timeline/read?user_id=1&start=50&stop=60"), 200, "[]\n")
	expect(t, "later page of unknown user", get(t, frontend+"/wrk2-api/user-timeline/read?user_id=999&start=50&stop=60"), 200, "[]\n")
	// A user registered after a 404 is found at once (no negative caching).
	expect(t, "unknown user before registering", get(t, frontend+"/wrk2-api/home-timeline/read?user_id=3&start=0&stop=10"), 404,
		"Get home-timeline failure: User with user_id 3 doesn't exist\n")
	register(t, frontend, "3")
	expect(t, "user just registered", get(t, frontend+"/wrk2-api/home-timeline/read?user_id=3&start=0&stop=10"), 200, "[]\n")
}

// TestWorkloadRequestsAreAccepted sends every kind of generated request to
// the front end, which proves the workloads' wire format matches the API.
func TestWorkloadRequestsAreAccepted(t *testing.T) {
	frontend := startInMemory(t)
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		register(t, frontend, id)
	}
	mixed, err := workload.New("mixed", 5)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]int{}
	for range 60 {
		req := mixed.Next(rng)
		httpReq, _ := http.NewRequest(req.Method, frontend+req.Path, strings.NewReader(string(req.Body)))
		for _, h := range req.Headers {
			httpReq.Header.Set(h.Name, h.Value)
		}
		resp, err := client.Do(httpReq)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", req.Method, req.Path, resp.StatusCode, body)
		}
		seen[req.Label]++
	}
	if len(seen) != 3 {
		t.Fatalf("60 mixed requests covered only %v", seen)
	}
	posts := readTimeline(t, frontend, "user-timeline", "1")
	for _, p := range posts {
		if problems := dataset.CheckPost(p); len(problems) > 0 {
			t.Fatalf("workload-composed post: %v", problems)
		}
	}
}
