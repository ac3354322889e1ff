package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of LoadOptions.
const (
	DefaultConcurrency = 32
	// DefaultLoadRequestTimeout is generous: a registration on FerretDB
	// under a full load's concurrency takes far less, but a slow one is
	// not a broken one.
	DefaultLoadRequestTimeout = 30 * time.Second
)

// LoadOptions configure Load.
type LoadOptions struct {
	// Frontend is the front end's base URL, e.g. http://127.0.0.1:8080.
	Frontend string
	// Users is how many users to register (1..Users); 0 means DefaultUsers.
	Users int
	// Concurrency is the requests in flight of each phase (up to three run
	// at once); 0 means DefaultConcurrency.
	Concurrency int
	// RequestTimeout bounds each request; 0 means DefaultLoadRequestTimeout.
	RequestTimeout time.Duration
	// Client sends the requests; nil means a client of Load's own.
	Client *http.Client
	// Progress, if set, gets a line per finished phase and, while a phase
	// runs, one every ProgressEvery with its count, rate and ETA.
	Progress func(line string)
	// ProgressEvery is the interval of running lines; 0 means
	// DefaultProgressEvery.
	ProgressEvery time.Duration
}

// LoadResult is what Load did, phase by phase.
type LoadResult struct {
	Phases []PhaseResult
}

// Requests is how many requests the phases sent.
func (r LoadResult) Requests() int {
	n := 0
	for _, p := range r.Phases {
		n += p.OK + p.Present + p.Failed
	}
	return n
}

// Failed is how many of them failed.
func (r LoadResult) Failed() int {
	n := 0
	for _, p := range r.Phases {
		n += p.Failed
	}
	return n
}

// Requests is how many requests a full load of users users sends, /healthz
// aside: one per user, movie, cast member, plot and movie information.
func Requests(users int) int {
	n := users
	for _, m := range Movies() {
		n += 3 + len(m.CastInfos)
	}
	return n
}

// Load writes the dataset through the front end: it registers the users
// and the movies (forms, as DeathStarBench's scripts do), then writes every
// cast member, plot and movie information (JSON, as its
// write_movie_info.py does). A registration answered "already existed"
// counts as present and the writes are upserts, so a second run changes
// nothing. The registrations run at once, then the three writes at once,
// each phase with Concurrency requests in flight. A phase with failures
// ends the load after its stage: the later ones would mostly fail the same
// way, and a re-run repeats only what is missing. The error names the
// first failed request and its answer.
func Load(ctx context.Context, opts LoadOptions) (LoadResult, error) {
	if opts.Users <= 0 {
		opts.Users = DefaultUsers
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultLoadRequestTimeout
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = DefaultProgressEvery
	}
	// the phases' requests go through c, made below, once the stages say
	// how many are in flight at most
	var c caller
	movies := Movies()
	var castInfos []CastInfo
	for _, m := range movies {
		castInfos = append(castInfos, m.CastInfos...)
	}
	users := loadPhase{"users", opts.Users, func(ctx context.Context, i int) (taskResult, string) {
		u := UserN(i + 1)
		return register(c.postForm(ctx, "/wrk2-api/user/register", url.Values{
			"first_name": {u.FirstName}, "last_name": {u.LastName}, "username": {u.Username}, "password": {u.Password},
		}), "POST /wrk2-api/user/register "+u.Username)
	}}
	registrations := loadPhase{"movies", len(movies), func(ctx context.Context, i int) (taskResult, string) {
		m := movies[i]
		return register(c.postForm(ctx, "/wrk2-api/movie/register", url.Values{"title": {m.Title}, "movie_id": {m.MovieID}}),
			fmt.Sprintf("POST /wrk2-api/movie/register %q (%s)", m.Title, m.MovieID))
	}}
	casts := loadPhase{"cast-info", len(castInfos), func(ctx context.Context, i int) (taskResult, string) {
		return write(ctx, c, "/wrk2-api/cast-info/write", castInfos[i], "cast info "+strconv.FormatInt(castInfos[i].CastInfoID, 10))
	}}
	plots := loadPhase{"plots", len(movies), func(ctx context.Context, i int) (taskResult, string) {
		return write(ctx, c, "/wrk2-api/plot/write", movies[i].Plot, "plot "+strconv.FormatInt(movies[i].Plot.PlotID, 10))
	}}
	infos := loadPhase{"movie-info", len(movies), func(ctx context.Context, i int) (taskResult, string) {
		return write(ctx, c, "/wrk2-api/movie-info/write", movies[i].Info, "movie info of "+movies[i].MovieID)
	}}
	// The phases of a stage write to services of their own and run at
	// once: each service has its own small CPU quota, so one after the
	// other they would leave the others idle (a 0.03-core deployment took
	// 70 s so). The writes come after the registrations, as DeathStarBench's
	// scripts order them.
	stages := [][]loadPhase{{users, registrations}, {casts, plots, infos}}
	widest := 0
	for _, stage := range stages {
		widest = max(widest, len(stage))
	}
	var err error
	if c, err = newCaller(opts.Frontend, opts.Client, opts.Concurrency*widest, opts.RequestTimeout); err != nil {
		return LoadResult{}, err
	}
	// One request first, so that a front end that is not there fails in
	// one timeout rather than in a thousand.
	if a := c.get(ctx, "/healthz"); a.err != nil {
		return LoadResult{}, fmt.Errorf("front end %s does not answer GET /healthz: %v", c.frontend, a.err)
	}
	var result LoadResult
	for _, stage := range stages {
		done := make([]PhaseResult, len(stage))
		var wg sync.WaitGroup
		for i, p := range stage {
			wg.Add(1)
			go func() {
				defer wg.Done()
				done[i] = runPhase(ctx, p.name, p.total, opts.Concurrency, opts.ProgressEvery, opts.Progress, p.task)
			}()
		}
		wg.Wait()
		result.Phases = append(result.Phases, done...)
		if err := ctx.Err(); err != nil {
			return result, fmt.Errorf("load stopped in phases %s after %d requests: %w", stageNames(stage), result.Requests(), err)
		}
		for _, r := range done {
			if r.Failed > 0 {
				return result, fmt.Errorf("%d of %d requests of phase %s failed, so the load stopped there; first: %s", r.Failed, r.Total, r.Name, r.FirstErrors[0])
			}
		}
	}
	return result, nil
}

// loadPhase is one kind of request of the load, sent total times.
type loadPhase struct {
	name  string
	total int
	task  func(ctx context.Context, i int) (taskResult, string)
}

func stageNames(stage []loadPhase) string {
	names := make([]string, len(stage))
	for i, p := range stage {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// register judges a registration's answer: the front end answers a name
// already taken with a 500 that says so, which a re-run expects.
func register(a answer, request string) (taskResult, string) {
	switch {
	case a.err == nil && a.status == http.StatusOK:
		return done, ""
	case a.err == nil && a.status >= 400 && strings.Contains(a.body, "already existed"):
		return present, ""
	default:
		return failure, request + ": " + a.String()
	}
}

func write(ctx context.Context, c caller, path string, value any, what string) (taskResult, string) {
	body, err := json.Marshal(value)
	if err != nil {
		return failure, what + ": " + err.Error()
	}
	if a := c.postJSON(ctx, path, body); a.err != nil || a.status != http.StatusOK {
		return failure, "POST " + path + " (" + what + "): " + a.String()
	}
	return done, ""
}
