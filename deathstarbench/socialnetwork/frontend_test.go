package socialnetwork_test

import (
	"context"
	"encoding/json"
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
		500, "User registration failure: User username_1 already existed\n")

	expect(t, "follow by name", post(t, frontend+"/wrk2-api/user/follow", "user_name=username_2&followee_name=username_1"), 200, "")
	expect(t, "follow by id", post(t, frontend+"/wrk2-api/user/follow", "user_id=3&followee_id=1"), 200, "")
	expect(t, "follow without followee", post(t, frontend+"/wrk2-api/user/follow", "user_name=username_2"), 400, "Incomplete arguments\n")
	if got := post(t, frontend+"/wrk2-api/user/follow", "user_name=username_2&followee_name=nobody"); got.status != 500 || !strings.HasPrefix(got.body, "Follow Failed: ") {
		t.Fatalf("follow unknown user: %d %q", got.status, got.body)
	}

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
	expect(t, "login with wrong password", post(t, frontend+"/wrk2-api/user/login", "username=username_1&password=nope"), 500, "User login failure: Incorrect username or password\n")
	expect(t, "login without password", post(t, frontend+"/wrk2-api/user/login", "username=username_1"), 400, "Incomplete arguments\n")

	// Compose: raw (not percent-encoded) body exactly as the wrk2 script sends it.
	raw := "username=username_1&user_id=1&text=hello @username_3 @nobody see http://example.com/x?a=b" +
		`&media_ids=["123456789012345678","42"]&media_types=["png","jpg"]&post_type=0`
	expect(t, "compose", post(t, frontend+"/wrk2-api/post/compose", raw), 200, "Successfully upload post\n")
	expect(t, "compose without text", post(t, frontend+"/wrk2-api/post/compose", "username=username_1&user_id=1&post_type=0"), 400, "Incomplete arguments\n")
	expect(t, "compose with bad media", post(t, frontend+"/wrk2-api/post/compose", "username=username_1&user_id=1&text=t&post_type=0&media_ids=[x&media_types=[]"), 400, "Incomplete arguments\n")
	if got := post(t, frontend+"/wrk2-api/post/compose", `username=username_1&user_id=1&text=t&post_type=0&media_ids=["1"]&media_types=[]`); got.status != 500 || !strings.HasPrefix(got.body, "compost_post failure: ") {
		t.Fatalf("compose with unequal media lists: %d %q", got.status, got.body)
	}

	expect(t, "timeline without stop", get(t, frontend+"/wrk2-api/home-timeline/read?user_id=2&start=0"), 400, "Incomplete arguments\n")
	if got := get(t, frontend+"/wrk2-api/user-timeline/read?user_id=2&start=5&stop=1"); got.status != 500 || !strings.HasPrefix(got.body, "Get user-timeline failure: ") {
		t.Fatalf("reversed page: %d %q", got.status, got.body)
	}

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
