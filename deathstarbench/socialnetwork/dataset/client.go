package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// hasPosts reports whether the timeline ("user-timeline" or
// "home-timeline") of userID holds a post.
// countPosts reads up to want posts of a user's timeline and counts them.
func countPosts(ctx context.Context, opts LoadOptions, timeline string, userID, want int) (int, error) {
	status, body, err := get(ctx, opts.Client, opts.Frontend+"/wrk2-api/"+timeline+"/read?user_id="+strconv.Itoa(userID)+"&start=0&stop="+strconv.Itoa(max(want, 1)))
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("read %s of %d: %d %s", timeline, userID, status, body)
	}
	var posts []json.RawMessage
	if err := json.Unmarshal([]byte(body), &posts); err != nil {
		return 0, fmt.Errorf("%s of %d is not a JSON array: %v", timeline, userID, err)
	}
	return len(posts), nil
}

func postForm(ctx context.Context, opts LoadOptions, path string, form url.Values) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, opts.Frontend+path, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(opts.Client, req)
}

func get(ctx context.Context, client *http.Client, target string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, "", err
	}
	return do(client, req)
}

func do(client *http.Client, req *http.Request) (int, string, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(body), err
}
