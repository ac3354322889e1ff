package mediamicroservices

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
)

// Frontend is the HTTP entry point, nginx/OpenResty's part in the
// original: the wrk2-api routes, and read routes of ours under /orchbench/
// for the verifier, the probe and the tests.
type Frontend struct {
	User        mm.UserService
	MovieID     mm.MovieIdService
	Text        mm.TextService
	UniqueID    mm.UniqueIdService
	CastInfo    mm.CastInfoService
	Plot        mm.PlotService
	MovieInfo   mm.MovieInfoService
	Page        mm.PageService
	UserReview  mm.UserReviewService
	Rating      mm.RatingService
	CallTimeout time.Duration
	Logger      *slog.Logger
}

// maxBody bounds a request body: the largest the loader sends is a movie's
// info, a few kilobytes.
const maxBody = 1 << 20

type route struct {
	prefix  string
	handler http.HandlerFunc
}

// Handler routes as nginx's prefix locations do: the longest route that
// begins the path serves it, whatever follows. DeathStarBench's
// compose-review.lua depends on that: it asks for the target URL with the
// route appended, /wrk2-api/review/compose/wrk2-api/review/compose under
// its README's target.
func (f *Frontend) Handler() http.Handler {
	if f.Logger == nil {
		f.Logger = slog.Default()
	}
	if f.CallTimeout <= 0 {
		f.CallTimeout = 30 * time.Second
	}
	routes := []route{
		{"/wrk2-api/user/register", f.registerUser},
		{"/wrk2-api/movie/register", f.registerMovie},
		{"/wrk2-api/review/compose", f.composeReview},
		{"/wrk2-api/movie-info/write", f.writeMovieInfo},
		{"/wrk2-api/cast-info/write", f.writeCastInfo},
		{"/wrk2-api/plot/write", f.writePlot},
		{"/orchbench/movie-id", f.readMovieID},
		{"/orchbench/user-reviews", f.readUserReviews},
		{"/orchbench/user", f.readUser},
		{"/orchbench/page", f.readPage},
		{"/orchbench/rating", f.readRating},
		{"/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }},
	}
	sort.Slice(routes, func(i, j int) bool { return len(routes[i].prefix) > len(routes[j].prefix) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range routes {
			if strings.HasPrefix(r.URL.Path, rt.prefix) {
				r.Body = http.MaxBytesReader(w, r.Body, maxBody)
				rt.handler(w, r)
				return
			}
		}
		http.NotFound(w, r)
	})
}

// newReqID is a request's ID, random as the original's (60 bits of
// nginx's request_id); compose-review keys the parts of a review by it.
func newReqID() int64 { return rand.Int64N(1 << 60) }

// postArgs returns the form fields of a POST body, or false after
// answering 400 when one is missing or empty, as the original's
// `Incomplete arguments`.
func postArgs(w http.ResponseWriter, r *http.Request, names ...string) (map[string]string, bool) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "Malformed form body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	args := make(map[string]string, len(names))
	for _, name := range names {
		value := r.PostForm.Get(name)
		if value == "" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "Incomplete arguments\n")
			return nil, false
		}
		args[name] = value
	}
	return args, true
}

// fail answers a failed call: 400 and 404 for what the caller got wrong,
// 500 otherwise, with the service's message.
func (f *Frontend) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	switch errorKind(err) {
	case mm.ErrorKind_BAD_REQUEST:
		status = http.StatusBadRequest
	case mm.ErrorKind_NOT_FOUND:
		status = http.StatusNotFound
	}
	if errors.Is(err, context.DeadlineExceeded) {
		f.Logger.Warn("request timed out", "path", r.URL.Path, "error", err)
	}
	http.Error(w, errorMessage(err), status)
}

func (f *Frontend) callContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), f.CallTimeout)
}

// composeReview hands the four parts a request carries to their services
// at once; the fifth, the rating, travels with the title through movie-id.
// Any failure answers 500, as the original's does.
func (f *Frontend) composeReview(w http.ResponseWriter, r *http.Request) {
	args, ok := postArgs(w, r, "title", "text", "username", "password", "rating")
	if !ok {
		return
	}
	rating, err := parseInt32(args["rating"])
	if err != nil {
		http.Error(w, "rating must be an integer: "+args["rating"], http.StatusBadRequest)
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	reqID := newReqID()
	calls := []func() error{
		func() error { return f.User.UploadUserWithUsername(ctx, reqID, args["username"]) },
		func() error { return f.MovieID.UploadMovieId(ctx, reqID, args["title"], rating) },
		func() error { return f.Text.UploadText(ctx, reqID, args["text"]) },
		func() error { return f.UniqueID.UploadUniqueId(ctx, reqID) },
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = call()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		http.Error(w, "compose review failed: "+errorMessage(firstError(errs)), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *Frontend) registerUser(w http.ResponseWriter, r *http.Request) {
	args, ok := postArgs(w, r, "first_name", "last_name", "username", "password")
	if !ok {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	if err := f.User.RegisterUser(ctx, newReqID(), args["first_name"], args["last_name"], args["username"], args["password"]); err != nil {
		// The original answers 500 for a taken username too.
		http.Error(w, errorMessage(err), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (f *Frontend) registerMovie(w http.ResponseWriter, r *http.Request) {
	args, ok := postArgs(w, r, "title", "movie_id")
	if !ok {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	if err := f.MovieID.RegisterMovieId(ctx, newReqID(), args["title"], args["movie_id"]); err != nil {
		http.Error(w, errorMessage(err), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// decodeJSON reads the body into out, or answers 400 naming what is wrong.
func decodeJSON(w http.ResponseWriter, r *http.Request, out any) bool {
	decoder := json.NewDecoder(r.Body)
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(out); err != nil {
		http.Error(w, "Malformed JSON body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func (f *Frontend) writeMovieInfo(w http.ResponseWriter, r *http.Request) {
	var info mm.MovieInfo
	if !decodeJSON(w, r, &info) {
		return
	}
	if info.MovieID == "" {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "Incomplete arguments\n")
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	if err := f.MovieInfo.WriteMovieInfo(ctx, newReqID(), &info); err != nil {
		f.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (f *Frontend) writeCastInfo(w http.ResponseWriter, r *http.Request) {
	var info mm.CastInfo
	if !decodeJSON(w, r, &info) {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	if err := f.CastInfo.WriteCastInfo(ctx, newReqID(), info.CastInfoID, info.Name, info.Gender, info.Intro); err != nil {
		f.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (f *Frontend) writePlot(w http.ResponseWriter, r *http.Request) {
	var plot struct {
		PlotID int64  `json:"plot_id"`
		Plot   string `json:"plot"`
	}
	if !decodeJSON(w, r, &plot) {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	if err := f.Plot.WritePlot(ctx, newReqID(), plot.PlotID, plot.Plot); err != nil {
		f.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
