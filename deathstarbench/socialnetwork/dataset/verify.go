package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	Frontend string
	Users    int
	// Samples is how many users' timelines are read.
	Samples int
	// Seed draws the sampled users.
	Seed uint64
	// DatasetSeed is the seed the dataset was loaded with (Load's graph),
	// from which the minimum length of each timeline follows.
	DatasetSeed uint64
	Client      *http.Client
	// LoadingWait bounds how long a read answered "LOADING" (a Redis still
	// reading its snapshot after a start) is tried again; 0 means
	// DefaultLoadingWait, negative not at all.
	LoadingWait time.Duration
}

// DefaultLoadingWait is how long Verify waits for a store that is still
// loading its data: a Redis restarted from the snapshot images answers
// LOADING for seconds at a small CPU share, though its orchestrator's TCP
// check already passes. A store loading longer than this fails as before.
const DefaultLoadingWait = 2 * time.Minute

// loadingRetry is how often a LOADING read is tried again.
const loadingRetry = time.Second

// stillLoading reports whether a response says a store is still reading
// its data into memory (Redis' LOADING error, passed on by the service),
// which passes, unlike a lost or malformed timeline.
func stillLoading(status int, body string) bool {
	return status == http.StatusInternalServerError && strings.Contains(body, "LOADING")
}

// maxVerifyPage bounds how many posts of one timeline are read: enough to
// tell a loaded timeline from a partly lost one without reading hundreds.
const maxVerifyPage = 50

// VerifyResult lists what Verify read and what was wrong.
type VerifyResult struct {
	TimelinesRead int
	PostsChecked  int
	// PostsWith counts checked posts having at least one mention, URL and
	// medium, to show those paths are populated.
	PostsWithMentions, PostsWithURLs, PostsWithMedia int
	Problems                                         []string
	// WaitedForLoading is how long reads waited for a store that was still
	// loading its data (LoadingWait).
	WaitedForLoading time.Duration
}

// OK reports whether nothing was wrong.
func (r VerifyResult) OK() bool { return len(r.Problems) == 0 }

// Verify reads the user and home timelines of sampled users and checks each
// holds at least the posts a completed Load leaves, and each post has every
// field of the API's post shape. Load gives every user at least one post and
// follows both ways along every friendship, so a user timeline holds at
// least one post and a home timeline at least one per friend; a flushed or
// restarted Redis leaves home timelines empty (they live only there; user
// timelines come back from MongoDB), and a load interrupted before some
// users composed leaves home timelines short.
func Verify(ctx context.Context, opts VerifyOptions) (VerifyResult, error) {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 30 * time.Second}
	}
	graph, err := Generate(opts.Users, EdgesFor(opts.Users), opts.DatasetSeed)
	if err != nil {
		return VerifyResult{}, fmt.Errorf("the dataset's graph, from which each timeline's minimum follows: %w", err)
	}
	degrees := graph.Degrees()
	frontend := strings.TrimRight(opts.Frontend, "/")
	rng := rand.New(rand.NewPCG(opts.Seed, 0xfe_21f7))
	var result VerifyResult
	problem := func(format string, args ...any) {
		if len(result.Problems) < 50 {
			result.Problems = append(result.Problems, fmt.Sprintf(format, args...))
		}
	}
	for range max(opts.Samples, 1) {
		userID := rng.IntN(max(opts.Users, 1))
		for _, timeline := range []string{"user-timeline", "home-timeline"} {
			if err := ctx.Err(); err != nil {
				return result, err
			}
			want, why := 1, "every user composes one or more"
			if timeline == "home-timeline" {
				want, why = degrees[userID], fmt.Sprintf("one per friend, %d friends", degrees[userID])
			}
			page := max(10, min(want, maxVerifyPage))
			want = min(want, page)
			target := frontend + "/wrk2-api/" + timeline + "/read?user_id=" + strconv.Itoa(userID) + "&start=0&stop=" + strconv.Itoa(page)
			status, body, err := getOnceLoaded(ctx, opts, target, &result.WaitedForLoading)
			if err != nil {
				return result, err
			}
			result.TimelinesRead++
			if status != http.StatusOK {
				problem("%s of user %d: HTTP %d: %s", timeline, userID, status, strings.TrimSpace(body))
				continue
			}
			var posts []map[string]any
			if err := json.Unmarshal([]byte(body), &posts); err != nil {
				problem("%s of user %d: not a JSON array of posts: %v", timeline, userID, err)
				continue
			}
			switch {
			case len(posts) == 0:
				problem("%s of user %d is empty, want at least %d (%s)", timeline, userID, want, why)
			case len(posts) < want:
				problem("%s of user %d has %d posts, want at least %d (%s)", timeline, userID, len(posts), want, why)
			}
			for _, post := range posts {
				result.PostsChecked++
				for _, missing := range CheckPost(post) {
					problem("%s of user %d: post %v: %s", timeline, userID, post["post_id"], missing)
				}
				if timeline == "user-timeline" {
					if creator, _ := post["creator"].(map[string]any); creator != nil && creator["user_id"] != strconv.Itoa(userID) {
						problem("user-timeline of user %d holds a post by %v", userID, creator["user_id"])
					}
				}
				if list, _ := post["user_mentions"].([]any); len(list) > 0 {
					result.PostsWithMentions++
				}
				if list, _ := post["urls"].([]any); len(list) > 0 {
					result.PostsWithURLs++
				}
				if list, _ := post["media"].([]any); len(list) > 0 {
					result.PostsWithMedia++
				}
			}
		}
	}
	return result, nil
}

// getOnceLoaded is get, tried again while the answer says a store is still
// loading, until the verification's loading budget (shared by every read,
// *waited so far) is spent; the last answer is returned either way.
func getOnceLoaded(ctx context.Context, opts VerifyOptions, target string, waited *time.Duration) (int, string, error) {
	budget := opts.LoadingWait
	if budget == 0 {
		budget = DefaultLoadingWait
	}
	for {
		status, body, err := get(ctx, opts.Client, target)
		if err != nil || !stillLoading(status, body) || *waited >= budget {
			return status, body, err
		}
		select {
		case <-ctx.Done():
			return status, body, nil
		case <-time.After(loadingRetry):
			*waited += loadingRetry
		}
	}
}

// CheckPost returns what is missing or malformed in one post of a timeline
// response, as decoded into generic JSON.
func CheckPost(post map[string]any) []string {
	var problems []string
	nonEmptyString := func(value any, name string) {
		text, ok := value.(string)
		if !ok || text == "" {
			problems = append(problems, name+" missing or empty")
		}
	}
	numericString := func(value any, name string) {
		text, _ := value.(string)
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			problems = append(problems, name+" is not a decimal string")
		}
	}
	numericString(post["post_id"], "post_id")
	numericString(post["req_id"], "req_id")
	numericString(post["timestamp"], "timestamp")
	nonEmptyString(post["text"], "text")
	if _, ok := post["post_type"].(float64); !ok {
		problems = append(problems, "post_type missing or not a number")
	}
	creator, _ := post["creator"].(map[string]any)
	if creator == nil {
		problems = append(problems, "creator missing")
	} else {
		numericString(creator["user_id"], "creator.user_id")
		nonEmptyString(creator["username"], "creator.username")
	}
	lists := map[string][]string{
		"user_mentions": {"user_id", "username"},
		"media":         {"media_id", "media_type"},
		"urls":          {"shortened_url", "expanded_url"},
	}
	for name, fields := range lists {
		list, ok := post[name].([]any)
		if !ok {
			problems = append(problems, name+" missing or not a list")
			continue
		}
		for i, item := range list {
			entry, _ := item.(map[string]any)
			for _, field := range fields {
				nonEmptyString(entry[field], fmt.Sprintf("%s[%d].%s", name, i, field))
			}
		}
	}
	return problems
}
