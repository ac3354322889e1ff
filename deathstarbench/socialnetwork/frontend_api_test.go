package socialnetwork_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork"
)

// send makes a request with an optional login_token cookie.
func send(t *testing.T, method, target, body, token string) response {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.AddCookie(&http.Cookie{Name: "login_token", Value: token})
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, string(data), resp.Header}
}

func expectRedirect(t *testing.T, what string, got response, location string) {
	t.Helper()
	if got.status != http.StatusFound || got.header.Get("Location") != location {
		t.Fatalf("%s: got %d Location %q (%q), want 302 to %q", what, got.status, got.header.Get("Location"), got.body, location)
	}
}

// TestPageAPITakesTheUserFromTheLoginCookie checks the original's /api/
// handlers: the user comes from the login_token cookie, not the form, each
// failure answers as the original (and in its order of checks), and
// get_follower / get_followee list IDs as strings.
func TestPageAPITakesTheUserFromTheLoginCookie(t *testing.T) {
	frontend := startInMemory(t)
	for _, id := range []string{"0", "1", "2"} {
		register(t, frontend, id)
	}
	expectRedirect(t, "page register", send(t, "POST", frontend+"/api/user/register", "first_name=a&last_name=b&username=page_user&password=pw", ""), "../../index.html")
	expect(t, "page register without password", send(t, "POST", frontend+"/api/user/register", "first_name=a&last_name=b&username=x", ""), 400, "Incomplete arguments\n")

	// wrk2 follow answers Success!; the page's follow sends the browser to
	// its contacts, its unfollow answers an empty 200.
	expect(t, "wrk2 follow", post(t, frontend+"/wrk2-api/user/follow", "user_name=username_1&followee_name=username_0"), 200, "Success!\n")
	expectRedirect(t, "page follow", send(t, "POST", frontend+"/api/user/follow", "user_id=2&followee_id=0", ""), "../../contact.html")
	expect(t, "page follow of nobody", send(t, "POST", frontend+"/api/user/follow", "user_name=username_2&followee_name=nobody", ""), 404, "Follow Failed: User: nobody doesn't exist\n")
	expectRedirect(t, "page follow back", send(t, "POST", frontend+"/api/user/follow", "user_id=0&followee_id=2", ""), "../../contact.html")

	login := post(t, frontend+"/wrk2-api/user/login", "username=username_0&password=pw0")
	token := strings.TrimSpace(login.body)
	if login.status != 200 || token == "" {
		t.Fatalf("login: %d %q", login.status, login.body)
	}
	forged, _ := socialnetwork.SignToken(socialnetwork.TokenClaims{UserID: "0", Username: "username_0"}, []byte("another key"))
	expired, _ := socialnetwork.SignToken(socialnetwork.TokenClaims{UserID: "0", Username: "username_0", ExpiresAt: time.Now().Add(-time.Minute).Unix()}, []byte("test-secret"))

	// Compose: fields first, then the login. The form's user is ignored.
	composeBody := "username=username_2&user_id=2&text=from the page&post_type=0"
	expect(t, "page compose without text or cookie", send(t, "POST", frontend+"/api/post/compose", "post_type=0", ""), 400, "Incomplete arguments\n")
	expectRedirect(t, "page compose without cookie", send(t, "POST", frontend+"/api/post/compose", composeBody, ""), "../../index.html")
	if got := send(t, "POST", frontend+"/api/post/compose", composeBody, forged); got.status != 401 || !strings.Contains(got.body, "signature") {
		t.Fatalf("page compose with a forged token: %d %q, want 401 and why", got.status, got.body)
	}
	expect(t, "page compose with an expired token", send(t, "POST", frontend+"/api/post/compose", composeBody, expired), 401, "Login token expired, please log in again\n")
	expect(t, "page compose", send(t, "POST", frontend+"/api/post/compose", composeBody, token), 200, "Successfully upload post\n")

	// User timeline: the page first (400), then the login (bare 401); the
	// query's user_id is not the one read.
	expect(t, "page user timeline without stop or cookie", send(t, "GET", frontend+"/api/user-timeline/read?start=0", "", ""), 400, "Incomplete arguments\n")
	expect(t, "page user timeline without cookie", send(t, "GET", frontend+"/api/user-timeline/read?start=0&stop=10", "", ""), 401, "")
	expect(t, "page user timeline with an expired token", send(t, "GET", frontend+"/api/user-timeline/read?start=0&stop=10", "", expired), 401, "")
	own := send(t, "GET", frontend+"/api/user-timeline/read?user_id=2&start=0&stop=10", "", token)
	var posts []map[string]any
	if own.status != 200 || json.Unmarshal([]byte(own.body), &posts) != nil || len(posts) != 1 {
		t.Fatalf("page user timeline: %d %q, want the one post", own.status, own.body)
	}
	if creator := posts[0]["creator"].(map[string]any); creator["user_id"] != "0" || creator["username"] != "username_0" || posts[0]["text"] != "from the page" {
		t.Fatalf("page compose posted as %v, want the token's user 0", posts[0])
	}

	// Home timeline: the login first, then the page.
	expect(t, "page home timeline without stop or cookie", send(t, "GET", frontend+"/api/home-timeline/read?start=0", "", ""), 401, "")
	expect(t, "page home timeline without stop", send(t, "GET", frontend+"/api/home-timeline/read?start=0", "", token), 400, "Incomplete arguments\n")
	user1 := strings.TrimSpace(post(t, frontend+"/wrk2-api/user/login", "username=username_1&password=pw1").body)
	home := send(t, "GET", frontend+"/api/home-timeline/read?start=0&stop=10", "", user1)
	if home.status != 200 || !strings.Contains(home.body, `"text":"from the page"`) {
		t.Fatalf("follower's page home timeline: %d %q", home.status, home.body)
	}

	// get_follower / get_followee of the token's user.
	expect(t, "followers without cookie", send(t, "GET", frontend+"/api/user/get_follower", "", ""), 401, "")
	expect(t, "followers with an expired token", send(t, "GET", frontend+"/api/user/get_follower", "", expired), 401, "Login token expired, please log in again\n")
	var followers []map[string]string
	got := send(t, "GET", frontend+"/api/user/get_follower", "", token)
	if got.status != 200 || json.Unmarshal([]byte(got.body), &followers) != nil || len(followers) != 2 {
		t.Fatalf("followers of 0: %d %q, want users 1 and 2", got.status, got.body)
	}
	ids := map[string]bool{}
	for _, f := range followers {
		ids[f["follower_id"]] = true
	}
	if !ids["1"] || !ids["2"] {
		t.Fatalf("followers of 0: %q, want follower_id 1 and 2", got.body)
	}
	expect(t, "followees of 0", send(t, "POST", frontend+"/api/user/get_followee", "", token), 200, `[{"followee_id":"2"}]`+"\n")

	// The page's unfollow: an empty 200, and the follow is gone.
	expect(t, "page unfollow", send(t, "POST", frontend+"/api/user/unfollow", "user_id=0&followee_id=2", ""), 200, "")
	expect(t, "followees after unfollow", send(t, "GET", frontend+"/api/user/get_followee", "", token), 200, "[]\n")
}
