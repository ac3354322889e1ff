package socialnetwork

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// Frontend serves DeathStarBench's HTTP API (the part its nginx/OpenResty
// Lua handlers implement) and turns each request into Thrift calls. Paths,
// parameters, status codes and response texts follow the original so that
// its wrk2 scripts and init_social_graph.py work against it unchanged.
type Frontend struct {
	ComposePost  sn.ComposePostService
	User         sn.UserService
	SocialGraph  sn.SocialGraphService
	UserTimeline sn.UserTimelineService
	HomeTimeline sn.HomeTimelineService
	// LoginCookieTTL is the lifetime of the login_token cookie.
	LoginCookieTTL time.Duration
	// CallTimeout bounds the Thrift calls behind one request.
	CallTimeout time.Duration
	Logger      *slog.Logger
}

// Handler returns the HTTP routes.
func (f *Frontend) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, prefix := range []string{"/wrk2-api", "/api"} {
		mux.HandleFunc("POST "+prefix+"/user/register", f.register)
		mux.HandleFunc("POST "+prefix+"/user/follow", f.follow)
		mux.HandleFunc("POST "+prefix+"/user/unfollow", f.unfollow)
		mux.HandleFunc("POST "+prefix+"/post/compose", f.compose)
		mux.HandleFunc("GET "+prefix+"/user-timeline/read", f.readUserTimeline)
		mux.HandleFunc("GET "+prefix+"/home-timeline/read", f.readHomeTimeline)
	}
	mux.HandleFunc("POST /wrk2-api/user/login", f.loginAPI)
	mux.HandleFunc("POST /api/user/login", f.loginRedirect)
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
	arg, ok := postForm(r)
	if !ok {
		incomplete(w)
		return
	}
	first, last, username, password := arg("first_name"), arg("last_name"), arg("username"), arg("password")
	userID, idErr := strconv.ParseInt(arg("user_id"), 10, 64)
	if first == "" || last == "" || username == "" || password == "" || idErr != nil {
		incomplete(w)
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	if err := f.User.RegisterUserWithId(ctx, newReqID(), first, last, username, password, userID); err != nil {
		f.fail(w, r, "User registration failure: ", err)
		return
	}
	say(w, http.StatusOK, "Success!")
}

func (f *Frontend) follow(w http.ResponseWriter, r *http.Request)   { f.followOrUnfollow(w, r, true) }
func (f *Frontend) unfollow(w http.ResponseWriter, r *http.Request) { f.followOrUnfollow(w, r, false) }

func (f *Frontend) followOrUnfollow(w http.ResponseWriter, r *http.Request, follow bool) {
	arg, ok := postForm(r)
	if !ok {
		incomplete(w)
		return
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
			return
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
		return
	}
	if err != nil {
		if follow {
			f.fail(w, r, "Follow Failed: ", err)
		} else {
			f.fail(w, r, "Unfollow Failed: ", err)
		}
		return
	}
	if follow {
		// The original follow handler answers 200 with an empty body.
		w.WriteHeader(http.StatusOK)
		return
	}
	say(w, http.StatusOK, "Success!")
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

func (f *Frontend) compose(w http.ResponseWriter, r *http.Request) {
	arg, ok := postForm(r)
	if !ok {
		incomplete(w)
		return
	}
	username, text := arg("username"), arg("text")
	userID, err1 := strconv.ParseInt(arg("user_id"), 10, 64)
	postType, err2 := strconv.ParseInt(arg("post_type"), 10, 32)
	if username == "" || text == "" || err1 != nil || err2 != nil {
		incomplete(w)
		return
	}
	var mediaIDs []int64
	var mediaTypes []string
	// As in the original, media count only when both lists are given.
	if arg("media_ids") != "" && arg("media_types") != "" {
		var err error
		if mediaIDs, err = parseMediaIDs(arg("media_ids")); err != nil {
			incomplete(w)
			return
		}
		if err := json.Unmarshal([]byte(arg("media_types")), &mediaTypes); err != nil {
			incomplete(w)
			return
		}
	}
	// The creator is not looked up: DeathStarBench's compose trusts the
	// username and user_id it is given, and checking them would add a user
	// lookup to every compose, the benchmark's costliest request. A post by
	// an unregistered user lands on a timeline nobody can find by name.
	if err := CheckCompose(text, mediaIDs, mediaTypes, sn.PostType(postType)); err != nil {
		f.fail(w, r, "compost_post failure: ", err)
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	err := f.ComposePost.ComposePost(ctx, newReqID(), username, userID, text, mediaIDs, mediaTypes, sn.PostType(postType))
	if err != nil {
		// "compost" is the original's spelling; clients may match on it.
		f.fail(w, r, "compost_post failure: ", err)
		return
	}
	say(w, http.StatusOK, "Successfully upload post")
}

// parseMediaIDs reads a JSON array of IDs given as strings (as DSB's
// scripts send them: 18 digits do not fit a double) or as numbers.
func parseMediaIDs(value string) ([]int64, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(value), &raw); err != nil {
		return nil, err
	}
	ids := make([]int64, len(raw))
	for i, item := range raw {
		text := strings.Trim(string(item), `"`)
		id, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("media id %s: %w", item, err)
		}
		ids[i] = id
	}
	return ids, nil
}

type readTimelineFunc func(ctx context.Context, reqID, userID int64, start, stop int32) ([]*sn.Post, error)

func (f *Frontend) readUserTimeline(w http.ResponseWriter, r *http.Request) {
	f.readTimeline(w, r, "Get user-timeline failure: ", f.UserTimeline.ReadUserTimeline)
}

func (f *Frontend) readHomeTimeline(w http.ResponseWriter, r *http.Request) {
	f.readTimeline(w, r, "Get home-timeline failure: ", f.HomeTimeline.ReadHomeTimeline)
}

func (f *Frontend) readTimeline(w http.ResponseWriter, r *http.Request, failure string, read readTimelineFunc) {
	query := r.URL.Query()
	userID, err1 := strconv.ParseInt(query.Get("user_id"), 10, 64)
	start, err2 := strconv.ParseInt(query.Get("start"), 10, 32)
	stop, err3 := strconv.ParseInt(query.Get("stop"), 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		incomplete(w)
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	reqID := newReqID()
	posts, err := read(ctx, reqID, userID, int32(start), int32(stop))
	if err != nil {
		f.fail(w, r, failure, err)
		return
	}
	// Timelines are keyed by user ID and know nothing of users, so an
	// unknown user reads as an empty timeline. Only a whole timeline that is
	// empty is worth asking the user service about: the benchmark's reads
	// start anywhere in 0..100, so pages past the end of a timeline are
	// common and checking them would add a lookup to most reads. An unknown
	// user asking for a later page therefore still gets [].
	if len(posts) == 0 && start == 0 {
		if _, err := f.User.GetUsername(ctx, reqID, userID); err != nil {
			if statusOf(err) == http.StatusNotFound {
				f.fail(w, r, failure, err)
				return
			}
			// The read itself succeeded; failing it because the check could
			// not be made would turn a slow user service into timeline errors.
			if f.Logger != nil {
				f.Logger.Warn("user check after empty timeline failed", "path", r.URL.Path, "user_id", userID, "error", err)
			}
		}
	}
	body, err := json.Marshal(TimelineJSON(posts))
	if err != nil {
		f.fail(w, r, failure, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write(append(body, '\n'))
}

// PostJSON is a post as the HTTP API returns it. As in the original, IDs
// and the timestamp are decimal strings (they exceed a double's precision);
// post_type stays a number.
type PostJSON struct {
	PostID       string        `json:"post_id"`
	Creator      UserRefJSON   `json:"creator"`
	ReqID        string        `json:"req_id"`
	Text         string        `json:"text"`
	UserMentions []UserRefJSON `json:"user_mentions"`
	Media        []MediaJSON   `json:"media"`
	URLs         []URLJSON     `json:"urls"`
	Timestamp    string        `json:"timestamp"`
	PostType     int32         `json:"post_type"`
}

// UserRefJSON is a creator or a mentioned user.
type UserRefJSON struct {
	UserID   string `json:"user_id"`
	Username string `json:"username"`
}

// MediaJSON is one attached medium.
type MediaJSON struct {
	MediaID   string `json:"media_id"`
	MediaType string `json:"media_type"`
}

// URLJSON is one shortened URL.
type URLJSON struct {
	ShortenedURL string `json:"shortened_url"`
	ExpandedURL  string `json:"expanded_url"`
}

// TimelineJSON converts posts to their HTTP form. Empty lists encode as []
// (the original's cjson writes {} for them).
func TimelineJSON(posts []*sn.Post) []PostJSON {
	out := make([]PostJSON, 0, len(posts))
	for _, p := range posts {
		j := PostJSON{
			PostID:       strconv.FormatInt(p.PostID, 10),
			ReqID:        strconv.FormatInt(p.ReqID, 10),
			Text:         p.Text,
			UserMentions: []UserRefJSON{},
			Media:        []MediaJSON{},
			URLs:         []URLJSON{},
			Timestamp:    strconv.FormatInt(p.Timestamp, 10),
			PostType:     int32(p.PostType),
		}
		if p.Creator != nil {
			j.Creator = UserRefJSON{UserID: strconv.FormatInt(p.Creator.UserID, 10), Username: p.Creator.Username}
		}
		for _, m := range p.UserMentions {
			j.UserMentions = append(j.UserMentions, UserRefJSON{UserID: strconv.FormatInt(m.UserID, 10), Username: m.Username})
		}
		for _, m := range p.Media {
			j.Media = append(j.Media, MediaJSON{MediaID: strconv.FormatInt(m.MediaID, 10), MediaType: m.MediaType})
		}
		for _, u := range p.Urls {
			j.URLs = append(j.URLs, URLJSON{ShortenedURL: u.ShortenedURL, ExpandedURL: u.ExpandedURL})
		}
		out = append(out, j)
	}
	return out
}
