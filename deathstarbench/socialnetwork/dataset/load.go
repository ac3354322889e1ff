package dataset

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// LoadOptions configure Load.
type LoadOptions struct {
	// Frontend is the front end's base URL, e.g. http://127.0.0.1:8080.
	Frontend string
	Graph    Graph
	// PostsPerUser is the mean number of posts per user; each user gets
	// 1..2×mean−1 (DeathStarBench's script draws 0..20), at least one so
	// every user timeline has a post. Zero composes none.
	PostsPerUser int
	Concurrency  int
	Seed         uint64
	Client       *http.Client
	// Progress, if set, receives a line per finished phase and, while a
	// phase runs, one every ProgressEvery with its counts, rate and ETA.
	Progress func(line string)
	// ProgressEvery is the interval of running progress lines; zero means
	// DefaultProgressEvery.
	ProgressEvery time.Duration
}

// PhaseResult counts one phase's requests.
type PhaseResult struct {
	OK, Skipped, Failed int64
	Duration            time.Duration
	// FirstErrors keeps a few failure texts for the report.
	FirstErrors []string
}

// LoadResult is what Load did.
type LoadResult struct {
	Register, Follow, Compose PhaseResult
}

// Failed is the total of failed requests.
func (r LoadResult) Failed() int64 { return r.Register.Failed + r.Follow.Failed + r.Compose.Failed }

// Username is the name DeathStarBench's scripts give user id.
func Username(id int) string { return "username_" + strconv.Itoa(id) }

// Load registers users 0..N-1, makes each friendship two follows (as
// DeathStarBench's script does), and composes posts with mentions, URLs and
// media. A second run skips users already registered and users whose
// posts are all still there (composedBefore); follows are idempotent.
func Load(ctx context.Context, opts LoadOptions) (LoadResult, error) {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 60 * time.Second}
	}
	opts.Concurrency = max(opts.Concurrency, 1)
	opts.Frontend = strings.TrimRight(opts.Frontend, "/")
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = DefaultProgressEvery
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	newPhase := func(name, unit string, total int) phase {
		return phase{name: name, unit: unit, total: total, workers: opts.Concurrency, every: opts.ProgressEvery, report: opts.Progress}
	}
	var result LoadResult
	users := opts.Graph.Users

	result.Register = runPhase(ctx, newPhase("register", "users", users), func(id int) (outcome, string) {
		suffix := strconv.Itoa(id)
		status, body, err := postForm(ctx, opts, "/wrk2-api/user/register", url.Values{
			"first_name": {"first_name_" + suffix}, "last_name": {"last_name_" + suffix},
			"username": {Username(id)}, "password": {"password_" + suffix}, "user_id": {suffix},
		})
		switch {
		case err != nil:
			return failed, err.Error()
		case status == http.StatusOK:
			return succeeded, ""
		case strings.Contains(body, "already existed"):
			return skipped, ""
		default:
			return failed, fmt.Sprintf("register %d: %d %s", id, status, body)
		}
	})
	progress(fmt.Sprintf("register: %d ok, %d skipped, %d failed in %s", result.Register.OK, result.Register.Skipped, result.Register.Failed, result.Register.Duration.Round(time.Millisecond)))
	if err := ctx.Err(); err != nil {
		return result, err
	}

	edges := opts.Graph.Edges
	plan := planPosts(opts.Seed, users, opts.PostsPerUser)
	// What a previous run left, all read before anything is composed. A
	// user's own posts outlive a Redis flush (MongoDB has them), but the
	// copies in the friends' home timelines live only in Redis, and a home
	// timeline lacks posts when the friends' composes were lost, not the
	// user's: so the composes are skipped only when every home timeline
	// holds one post per friend (what Verify asks) and then only for users
	// whose own timeline holds all their planned posts. Otherwise every user
	// composes again; the extra posts cost a re-run time, never correctness.
	composed := make([]bool, users)
	if opts.PostsPerUser > 0 {
		degrees := opts.Graph.Degrees()
		var homesFull atomic.Bool
		homesFull.Store(true)
		check := runPhase(ctx, newPhase("check", "users", users), func(id int) (outcome, string) {
			own, err := countPosts(ctx, opts, "user-timeline", id, len(plan[id]))
			if err != nil {
				return failed, err.Error()
			}
			if own == 0 {
				// nothing of this user's is anywhere yet, friends' homes included
				homesFull.Store(false)
				return skipped, ""
			}
			home, err := countPosts(ctx, opts, "home-timeline", id, degrees[id])
			if err != nil {
				return failed, err.Error()
			}
			if home < degrees[id] {
				homesFull.Store(false)
			}
			composed[id] = own >= len(plan[id])
			return succeeded, ""
		})
		if check.Failed > 0 {
			// Composing without knowing would post twice for some users.
			result.Compose = PhaseResult{Failed: check.Failed, FirstErrors: check.FirstErrors, Duration: check.Duration}
			progress(fmt.Sprintf("check: %d users could not be read, nothing composed", check.Failed))
			return result, fmt.Errorf("reading which users have posts: %d failed", check.Failed)
		}
		if !homesFull.Load() {
			clear(composed)
		}
		// Posts are composed after every follow, so when every user
		// timeline has posts a previous run completed the follows:
		// re-sending them is harmless but costs minutes on FerretDB.
		if check.OK == int64(users) {
			result.Follow = PhaseResult{Skipped: int64(2 * len(edges)), Duration: check.Duration}
			progress(fmt.Sprintf("follow: skipped, every user already has posts (checked in %s)", check.Duration.Round(time.Millisecond)))
			edges = nil
		}
	}
	if edges != nil {
		result.Follow = runPhase(ctx, newPhase("follow", "follows", 2*len(edges)), func(i int) (outcome, string) {
			edge := edges[i/2]
			follower, followee := edge[0], edge[1]
			if i%2 == 1 {
				follower, followee = followee, follower
			}
			status, body, err := postForm(ctx, opts, "/wrk2-api/user/follow", url.Values{
				"user_name": {Username(follower)}, "followee_name": {Username(followee)},
			})
			switch {
			case err != nil:
				return failed, err.Error()
			case status == http.StatusOK:
				return succeeded, ""
			default:
				return failed, fmt.Sprintf("follow %d->%d: %d %s", follower, followee, status, body)
			}
		})
		progress(fmt.Sprintf("follow: %d ok, %d failed in %s", result.Follow.OK, result.Follow.Failed, result.Follow.Duration.Round(time.Millisecond)))
	}
	if err := ctx.Err(); err != nil || opts.PostsPerUser <= 0 {
		return result, err
	}

	var posted atomic.Int64
	var skippedPosts atomic.Int64
	composePhase := newPhase("compose", "users", users)
	composePhase.extra = func() string { return fmt.Sprintf("%d posts", posted.Load()) }
	result.Compose = runPhase(ctx, composePhase, func(id int) (outcome, string) {
		if composed[id] {
			skippedPosts.Add(int64(len(plan[id])))
			return skipped, ""
		}
		for _, form := range plan[id] {
			status, body, err := postForm(ctx, opts, "/wrk2-api/post/compose", form)
			if err != nil {
				return failed, err.Error()
			}
			if status != http.StatusOK {
				return failed, fmt.Sprintf("compose by %d: %d %s", id, status, body)
			}
			posted.Add(1)
		}
		return succeeded, ""
	})
	// Report posts rather than users.
	result.Compose.OK, result.Compose.Skipped = posted.Load(), skippedPosts.Load()
	progress(fmt.Sprintf("compose: %d posts ok, %d skipped, %d users failed in %s", result.Compose.OK, result.Compose.Skipped, result.Compose.Failed, result.Compose.Duration.Round(time.Millisecond)))
	return result, ctx.Err()
}
