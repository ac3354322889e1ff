package socialnetwork

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// Frontend serves DeathStarBench's HTTP API (the part its nginx/OpenResty
// Lua handlers implement) and turns each request into Thrift calls. Paths,
// parameters, status codes and response texts follow the original so that
// its wrk2 scripts and init_social_graph.py work against it unchanged.
//
// The original has two APIs: /wrk2-api/..., which takes the user from the
// request's parameters (what the benchmark and the loader call), and
// /api/..., which its web pages call and which takes the user from the
// login_token cookie (frontend_api.go).
type Frontend struct {
	ComposePost  sn.ComposePostService
	User         sn.UserService
	SocialGraph  sn.SocialGraphService
	UserTimeline sn.UserTimelineService
	HomeTimeline sn.HomeTimelineService
	// Secret verifies login tokens; the user service signs them with the
	// same key, as nginx and the user service share one in the original.
	Secret []byte
	// LoginCookieTTL is the lifetime of the login_token cookie.
	LoginCookieTTL time.Duration
	// CallTimeout bounds the Thrift calls behind one request.
	CallTimeout time.Duration
	Logger      *slog.Logger
}

// Handler returns the HTTP routes.
func (f *Frontend) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /wrk2-api/user/register", f.register)
	mux.HandleFunc("POST /wrk2-api/user/follow", f.follow)
	mux.HandleFunc("POST /wrk2-api/user/unfollow", f.unfollow)
	mux.HandleFunc("POST /wrk2-api/user/login", f.loginAPI)
	mux.HandleFunc("POST /wrk2-api/post/compose", f.compose)
	mux.HandleFunc("GET /wrk2-api/user-timeline/read", f.readUserTimeline)
	mux.HandleFunc("GET /wrk2-api/home-timeline/read", f.readHomeTimeline)

	mux.HandleFunc("POST /api/user/register", f.registerPage)
	mux.HandleFunc("POST /api/user/follow", f.followPage)
	mux.HandleFunc("POST /api/user/unfollow", f.unfollowPage)
	mux.HandleFunc("POST /api/user/login", f.loginRedirect)
	mux.HandleFunc("POST /api/post/compose", f.composePage)
	mux.HandleFunc("GET /api/user-timeline/read", f.readUserTimelinePage)
	mux.HandleFunc("GET /api/home-timeline/read", f.readHomeTimelinePage)
	for _, method := range []string{"GET ", "POST "} {
		mux.HandleFunc(method+"/api/user/get_follower", f.getFollowers)
		mux.HandleFunc(method+"/api/user/get_followee", f.getFollowees)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { say(w, http.StatusOK, "ok") })
	return mux
}

// newReqID stands in for the request ID nginx derives from $request_id.
func newReqID() int64 { return rand.Int64N(1 << 60) }

// say writes text and a newline, as ngx.say does.
func say(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	fmt.Fprintln(w, text)
}

func incomplete(w http.ResponseWriter) { say(w, http.StatusBadRequest, "Incomplete arguments") }

// statusOf maps a service error to the HTTP status. The original answers
// 500 to everything; the texts stay its own, so clients that match on them
// still work. Anything that is not a ServiceError (a broken connection, a
// timeout, a Thrift application exception) is the system's fault.
func statusOf(err error) int {
	var se *sn.ServiceError
	if !errors.As(err, &se) {
		return http.StatusInternalServerError
	}
	switch se.Kind {
	case sn.ErrorKind_BAD_REQUEST:
		return http.StatusBadRequest
	case sn.ErrorKind_NOT_FOUND:
		return http.StatusNotFound
	case sn.ErrorKind_UNAUTHORIZED:
		return http.StatusUnauthorized
	case sn.ErrorKind_CONFLICT:
		return http.StatusConflict
	default:
		return http.StatusInternalServerError
	}
}

func (f *Frontend) fail(w http.ResponseWriter, r *http.Request, prefix string, err error) {
	message := prefix + errorMessage(err)
	status := statusOf(err)
	if f.Logger != nil {
		// A client's mistake is no news for the operator.
		level := slog.LevelWarn
		if status < http.StatusInternalServerError {
			level = slog.LevelDebug
		}
		f.Logger.Log(r.Context(), level, "request failed", "path", r.URL.Path, "status", status, "error", message)
	}
	say(w, status, message)
}

func (f *Frontend) context(r *http.Request) (context.Context, context.CancelFunc) {
	timeout := f.CallTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return context.WithTimeout(r.Context(), timeout)
}

// postForm returns the form-encoded body parameters. Lua's get_post_args
// reads only the body, so the query string is ignored here too.
func postForm(r *http.Request) (func(string) string, bool) {
	if err := r.ParseForm(); err != nil {
		return nil, false
	}
	return r.PostForm.Get, true
}

func (f *Frontend) register(w http.ResponseWriter, r *http.Request) {
	if f.registerUser(w, r, true) {
		say(w, http.StatusOK, "Success!")
	}
}

// registerUser registers the user of the form, with the form's user_id if
// withID (the benchmark's API, so IDs are the dataset's) or one the user
// service makes. It reports whether it succeeded, having answered if not.
func (f *Frontend) registerUser(w http.ResponseWriter, r *http.Request, withID bool) bool {
	arg, ok := postForm(r)
	if !ok {
		incomplete(w)
		return false
	}
	first, last, username, password := arg("first_name"), arg("last_name"), arg("username"), arg("password")
	var userID int64
	var idErr error
	if withID {
		userID, idErr = strconv.ParseInt(arg("user_id"), 10, 64)
	}
	if first == "" || last == "" || username == "" || password == "" || idErr != nil {
		incomplete(w)
		return false
	}
	ctx, cancel := f.context(r)
	defer cancel()
	var err error
	if withID {
		err = f.User.RegisterUserWithId(ctx, newReqID(), first, last, username, password, userID)
	} else {
		err = f.User.RegisterUser(ctx, newReqID(), first, last, username, password)
	}
	if err != nil {
		f.fail(w, r, "User registration failure: ", err)
		return false
	}
	return true
}

func (f *Frontend) follow(w http.ResponseWriter, r *http.Request) {
	if f.followOrUnfollow(w, r, true) {
		say(w, http.StatusOK, "Success!")
	}
}

func (f *Frontend) unfollow(w http.ResponseWriter, r *http.Request) {
	if f.followOrUnfollow(w, r, false) {
		say(w, http.StatusOK, "Success!")
	}
}

// followOrUnfollow changes the follow named by the form, by IDs or by
// usernames. It reports whether it succeeded, having answered if not.
func (f *Frontend) followOrUnfollow(w http.ResponseWriter, r *http.Request, follow bool) bool {
	arg, ok := postForm(r)
	if !ok {
		incomplete(w)
		return false
	}
	ctx, cancel := f.context(r)
	defer cancel()
	reqID := newReqID()
	var err error
	switch {
	case arg("user_id") != "" && arg("followee_id") != "":
		userID, err1 := strconv.ParseInt(arg("user_id"), 10, 64)
		followeeID, err2 := strconv.ParseInt(arg("followee_id"), 10, 64)
		if err1 != nil || err2 != nil {
			incomplete(w)
			return false
		}
		if follow {
			err = f.SocialGraph.Follow(ctx, reqID, userID, followeeID)
		} else {
			err = f.SocialGraph.Unfollow(ctx, reqID, userID, followeeID)
		}
	case arg("user_name") != "" && arg("followee_name") != "":
		if follow {
			err = f.SocialGraph.FollowWithUsername(ctx, reqID, arg("user_name"), arg("followee_name"))
		} else {
			err = f.SocialGraph.UnfollowWithUsername(ctx, reqID, arg("user_name"), arg("followee_name"))
		}
	default:
		incomplete(w)
		return false
	}
	if err != nil {
		if follow {
			f.fail(w, r, "Follow Failed: ", err)
		} else {
			f.fail(w, r, "Unfollow Failed: ", err)
		}
		return false
	}
	return true
}

func (f *Frontend) login(w http.ResponseWriter, r *http.Request) (token, username string, ok bool) {
	arg, parsed := postForm(r)
	if !parsed || arg("username") == "" || arg("password") == "" {
		incomplete(w)
		return "", "", false
	}
	ctx, cancel := f.context(r)
	defer cancel()
	token, err := f.User.Login(ctx, newReqID(), arg("username"), arg("password"))
	if err != nil {
		f.fail(w, r, "User login failure: ", err)
		return "", "", false
	}
	ttl := f.LoginCookieTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	http.SetCookie(w, &http.Cookie{Name: "login_token", Value: token, Path: "/", Expires: time.Now().Add(ttl)})
	return token, arg("username"), true
}

// loginAPI answers a login with the token in the body (and the cookie) so
// scripted clients need not follow a redirect to a page we do not serve.
func (f *Frontend) loginAPI(w http.ResponseWriter, r *http.Request) {
	if token, _, ok := f.login(w, r); ok {
		say(w, http.StatusOK, token)
	}
}

// loginRedirect behaves as the original's browser-facing login: cookie and
// a redirect to the main page.
func (f *Frontend) loginRedirect(w http.ResponseWriter, r *http.Request) {
	if _, username, ok := f.login(w, r); ok {
		http.Redirect(w, r, "/main.html?username="+username, http.StatusFound)
	}
}
