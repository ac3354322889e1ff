package socialnetwork

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// The /api/... handlers of the original's web pages. They differ from
// /wrk2-api/... in where the user comes from (the login_token cookie, a JWT
// the user service signed) and in answers made for a browser: redirects to
// its pages, which we do not serve, and bare 401s. Each keeps the
// original's order of checks, since that decides which failure a request
// with several faults gets.

// Where the original's pages are, relative to /api/<area>/<name>, as its
// handlers send them in Location.
const (
	indexPage   = "../../index.html"
	contactPage = "../../contact.html"
)

const tokenExpired = "Login token expired, please log in again"

// loginProblem is why a request has no usable login; the handlers answer
// each in the original's own way.
type loginProblem int

const (
	loginOK loginProblem = iota
	noLoginCookie
	badLoginToken
	expiredLoginToken
)

// loginOf returns the user of the request's login_token cookie, and for a
// bad token, why.
func (f *Frontend) loginOf(r *http.Request) (userID int64, username string, problem loginProblem, reason string) {
	cookie, err := r.Cookie("login_token")
	if err != nil || cookie.Value == "" {
		return 0, "", noLoginCookie, ""
	}
	claims, err := VerifyToken(cookie.Value, f.Secret, time.Now())
	if errors.Is(err, ErrTokenExpired) {
		return 0, "", expiredLoginToken, tokenExpired
	}
	if err != nil {
		return 0, "", badLoginToken, err.Error()
	}
	userID, err = strconv.ParseInt(claims.UserID, 10, 64)
	if err != nil {
		return 0, "", badLoginToken, "token user_id is not a number"
	}
	return userID, claims.Username, loginOK, ""
}

// redirect answers 302 to a page of the original's site. The Location is
// relative as the original sends it; http.Redirect would make it absolute.
func redirect(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusFound)
}

// unauthorized answers 401 with reason as the body, or none.
func unauthorized(w http.ResponseWriter, reason string) {
	if reason == "" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	say(w, http.StatusUnauthorized, reason)
}

// registerPage registers with an ID the user service makes (the page has
// no user_id field) and sends the browser to the sign-in page.
func (f *Frontend) registerPage(w http.ResponseWriter, r *http.Request) {
	if f.registerUser(w, r, false) {
		redirect(w, indexPage)
	}
}

// followPage is /api/user/follow: the original checks no login here
// (that code is commented out) and sends the browser back to its contacts.
func (f *Frontend) followPage(w http.ResponseWriter, r *http.Request) {
	if f.followOrUnfollow(w, r, true) {
		redirect(w, contactPage)
	}
}

// unfollowPage is /api/user/unfollow, which answers an empty 200.
func (f *Frontend) unfollowPage(w http.ResponseWriter, r *http.Request) {
	if f.followOrUnfollow(w, r, false) {
		w.WriteHeader(http.StatusOK)
	}
}

// composePage composes as the logged-in user. The original checks the
// post's fields before the login; without a cookie it redirects to the
// sign-in page (its 401 is overwritten by the redirect), and with a bad or
// expired token it answers 401 and why.
func (f *Frontend) composePage(w http.ResponseWriter, r *http.Request) {
	arg, ok := postForm(r)
	if !ok {
		incomplete(w)
		return
	}
	if _, ok := parseComposeForm(arg); !ok {
		incomplete(w)
		return
	}
	userID, username, problem, reason := f.loginOf(r)
	switch problem {
	case noLoginCookie:
		redirect(w, indexPage)
		return
	case badLoginToken, expiredLoginToken:
		unauthorized(w, reason)
		return
	}
	f.composeAs(w, r, arg, username, userID)
}

// readUserTimelinePage reads the logged-in user's own timeline; the page
// is checked before the login.
func (f *Frontend) readUserTimelinePage(w http.ResponseWriter, r *http.Request) {
	start, stop, ok := pageOf(r)
	if !ok {
		incomplete(w)
		return
	}
	userID, _, problem, _ := f.loginOf(r)
	if problem != loginOK {
		unauthorized(w, "")
		return
	}
	f.readTimeline(w, r, "Get user-timeline failure: ", f.UserTimeline.ReadUserTimeline, userID, start, stop)
}

// readHomeTimelinePage reads the logged-in user's home timeline; here the
// original checks the login before the page.
func (f *Frontend) readHomeTimelinePage(w http.ResponseWriter, r *http.Request) {
	userID, _, problem, _ := f.loginOf(r)
	if problem != loginOK {
		unauthorized(w, "")
		return
	}
	start, stop, ok := pageOf(r)
	if !ok {
		incomplete(w)
		return
	}
	f.readTimeline(w, r, "Get home-timeline failure: ", f.HomeTimeline.ReadHomeTimeline, userID, start, stop)
}

// FollowerJSON and FolloweeJSON are the entries of get_follower and
// get_followee: an ID as a decimal string, as the original writes it.
type FollowerJSON struct {
	FollowerID string `json:"follower_id"`
}

// FolloweeJSON is an entry of get_followee.
type FolloweeJSON struct {
	FolloweeID string `json:"followee_id"`
}

func (f *Frontend) getFollowers(w http.ResponseWriter, r *http.Request) {
	userID, ok := f.pageLogin(w, r)
	if !ok {
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	ids, err := f.SocialGraph.GetFollowers(ctx, newReqID(), userID)
	if err != nil {
		// (sic) the original's get_follower says user-timeline.
		f.fail(w, r, "Get user-timeline failure: ", err)
		return
	}
	list := make([]FollowerJSON, len(ids))
	for i, id := range ids {
		list[i] = FollowerJSON{FollowerID: strconv.FormatInt(id, 10)}
	}
	f.writeJSON(w, r, "Get user-timeline failure: ", list)
}

func (f *Frontend) getFollowees(w http.ResponseWriter, r *http.Request) {
	userID, ok := f.pageLogin(w, r)
	if !ok {
		return
	}
	ctx, cancel := f.context(r)
	defer cancel()
	ids, err := f.SocialGraph.GetFollowees(ctx, newReqID(), userID)
	if err != nil {
		// (sic) as get_follower.
		f.fail(w, r, "Get user-timeline failure: ", err)
		return
	}
	list := make([]FolloweeJSON, len(ids))
	for i, id := range ids {
		list[i] = FolloweeJSON{FolloweeID: strconv.FormatInt(id, 10)}
	}
	f.writeJSON(w, r, "Get user-timeline failure: ", list)
}

// pageLogin is the login check of get_follower and get_followee: a bare
// 401 without a cookie, 401 and why with a bad or expired token.
func (f *Frontend) pageLogin(w http.ResponseWriter, r *http.Request) (int64, bool) {
	userID, _, problem, reason := f.loginOf(r)
	if problem != loginOK {
		unauthorized(w, reason)
		return 0, false
	}
	return userID, true
}
