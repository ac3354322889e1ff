package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of VerifyOptions.
const (
	// DefaultRequestTimeout bounds one request of Verify: the checks are
	// light reads, so a deployment slower than this is taken for a broken
	// one.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultVerifyConcurrency is the reads in flight: every movie's two
	// reads one after the other would take minutes on a remote cluster.
	DefaultVerifyConcurrency = 8
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Frontend is the front end's base URL, e.g. http://127.0.0.1:8080.
	Frontend string
	// Client sends the requests; nil means a client of Verify's own.
	Client *http.Client
	// RequestTimeout bounds each request; 0 means DefaultRequestTimeout.
	// The whole run is bounded by ctx.
	RequestTimeout time.Duration
	// Users is how many users were loaded; 0 means DefaultUsers.
	Users int
	// SampledUsers and SampledMovies, when positive, check the first, the
	// last and that many others drawn with Seed; 0 checks every one.
	SampledUsers, SampledMovies int
	// Seed draws the samples; 0 means 1.
	Seed uint64
	// Concurrency is the reads in flight; 0 means DefaultVerifyConcurrency.
	Concurrency int
	// Progress, when set, gets one line per check as it ends.
	Progress func(line string)
}

// VerifyCheck is the outcome of one check.
type VerifyCheck struct {
	Name string
	// Problem is empty when the check passed; else what was wrong and what
	// the front end answered.
	Problem string
}

// VerifyResult lists every check Verify made, in order.
type VerifyResult struct {
	Checks []VerifyCheck
}

// Failed lists the checks that failed.
func (r VerifyResult) Failed() []VerifyCheck {
	var out []VerifyCheck
	for _, c := range r.Checks {
		if c.Problem != "" {
			out = append(out, c)
		}
	}
	return out
}

// unknownTitle is in no dataset: the movie-id service must answer 404.
const unknownTitle = "orchbench: a title no dataset holds"

// Verify reads the dataset back through the front end's read routes: each
// (or each sampled) user exists with its names, each (or each sampled)
// title gives its movie id, and each such movie's page holds exactly the
// movie information, cast (in order) and plot Load wrote. Then an unknown
// title must answer 404, and a compose without a title 400 "Incomplete
// arguments": the one POST, which writes nothing. Every check runs (each
// request bounded by RequestTimeout, all by ctx); a check over many items
// stops at its first wrong one. The error names the first failed check and
// what it got. A cancelled ctx stops the run with ctx's error.
func Verify(ctx context.Context, opts VerifyOptions) (VerifyResult, error) {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.Users <= 0 {
		opts.Users = DefaultUsers
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultVerifyConcurrency
	}
	c, err := newCaller(opts.Frontend, opts.Client, opts.Concurrency, opts.RequestTimeout)
	if err != nil {
		return VerifyResult{}, err
	}
	v := &verifier{opts: opts, caller: c}
	movies := Movies()

	users, usersSampled := sample(opts.Users, opts.SampledUsers, opts.Seed)
	v.checkAll(ctx, fmt.Sprintf("%d users exist with their names (%s)", len(users), usersSampled), len(users),
		func(i int) (string, string) {
			u := UserN(users[i] + 1)
			return u.Username, "/orchbench/user?" + url.Values{"username": {u.Username}}.Encode()
		},
		func(i int, a answer) string { return userIs(a, UserN(users[i]+1)) })

	picked, moviesSampled := sample(len(movies), opts.SampledMovies, opts.Seed+1)
	label := func(i int) string { return fmt.Sprintf("%q (%s)", movies[picked[i]].Title, movies[picked[i]].MovieID) }
	v.checkAll(ctx, fmt.Sprintf("%d titles give their movie ids (%s)", len(picked), moviesSampled), len(picked),
		func(i int) (string, string) {
			return label(i), "/orchbench/movie-id?" + url.Values{"title": {movies[picked[i]].Title}}.Encode()
		},
		func(i int, a answer) string { return movieIDIs(a, movies[picked[i]].MovieID) })
	v.checkAll(ctx, fmt.Sprintf("%d movie pages hold the dataset's movie info, cast and plot (%s)", len(picked), moviesSampled), len(picked),
		func(i int) (string, string) {
			return label(i), "/orchbench/page?" + url.Values{"movie_id": {movies[picked[i]].MovieID}, "review_start": {"0"}, "review_stop": {"1"}}.Encode()
		},
		func(i int, a answer) string { return pageIs(a, movies[picked[i]]) })

	v.check(ctx, "an unknown title answers 404 from /orchbench/movie-id", func(ctx context.Context) answer {
		return v.caller.get(ctx, "/orchbench/movie-id?"+url.Values{"title": {unknownTitle}}.Encode())
	}, func(a answer) string {
		if a.status != http.StatusNotFound {
			return "want HTTP 404"
		}
		return ""
	})
	v.check(ctx, `a compose without a title answers 400 "Incomplete arguments"`, func(ctx context.Context) answer {
		u := UserN(1)
		return v.caller.postForm(ctx, "/wrk2-api/review/compose", url.Values{
			"text": {"orchbench verify: no title, so no review"}, "username": {u.Username}, "password": {u.Password}, "rating": {"5"},
		})
	}, func(a answer) string {
		if a.status != http.StatusBadRequest || strings.TrimSpace(a.body) != "Incomplete arguments" {
			return `want HTTP 400 "Incomplete arguments"`
		}
		return ""
	})

	result := VerifyResult{Checks: v.checks}
	if err := ctx.Err(); err != nil {
		return result, fmt.Errorf("verification stopped after %d checks: %w", len(v.checks), err)
	}
	if failed := result.Failed(); len(failed) > 0 {
		return result, fmt.Errorf("%d of %d checks failed; first: %s: %s", len(failed), len(result.Checks), failed[0].Name, failed[0].Problem)
	}
	return result, nil
}

type verifier struct {
	opts   VerifyOptions
	caller caller
	checks []VerifyCheck
}

func (v *verifier) record(name, problem string) {
	v.checks = append(v.checks, VerifyCheck{Name: name, Problem: problem})
	if v.opts.Progress == nil {
		return
	}
	if problem == "" {
		v.opts.Progress("ok    " + name)
	} else {
		v.opts.Progress("FAIL  " + name + ": " + problem)
	}
}

// check sends one request and judges its answer with judge, which returns
// what is wrong ("" when nothing is).
func (v *verifier) check(ctx context.Context, name string, send func(context.Context) answer, judge func(answer) string) {
	if ctx.Err() != nil {
		return
	}
	v.record(name, judged(send(ctx), judge))
}

// checkAll is one check over n reads, opts.Concurrency at a time. Once one
// is wrong no more are sent, and the check names the first wrong item (in
// item order) among those read.
func (v *verifier) checkAll(ctx context.Context, name string, n int, request func(i int) (label, path string), judge func(i int, a answer) string) {
	if ctx.Err() != nil {
		return
	}
	problems := make([]string, n)
	var (
		next  atomic.Int64
		wrong atomic.Bool
		wg    sync.WaitGroup
	)
	for range min(v.opts.Concurrency, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && !wrong.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				label, path := request(i)
				if problem := judged(v.caller.get(ctx, path), func(a answer) string { return judge(i, a) }); problem != "" {
					problems[i] = label + ": " + problem
					wrong.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	for _, problem := range problems {
		if problem != "" {
			v.record(name, problem)
			return
		}
	}
	v.record(name, "")
}

// judged is judge's verdict with the answer appended, or the error that
// stood in for an answer.
func judged(a answer, judge func(answer) string) string {
	if a.err != nil {
		return a.String()
	}
	problem := judge(a)
	if problem == "" {
		return ""
	}
	return problem + "; " + a.String()
}

// sample is the indices 0..count-1 to check: all of them when drawn is 0
// or covers them, else the first, the last and drawn others, drawn with
// seed; and a description of which.
func sample(count, drawn int, seed uint64) ([]int, string) {
	if drawn <= 0 || drawn+2 >= count {
		all := make([]int, count)
		for i := range all {
			all[i] = i
		}
		return all, "every one"
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d656469))
	out := []int{0, count - 1}
	for _, d := range rng.Perm(count - 2)[:drawn] {
		out = append(out, d+1)
	}
	return out, fmt.Sprintf("the first, the last and %d drawn with seed %d", drawn, seed)
}
