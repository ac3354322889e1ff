package mediamicroservices

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// The read routes are ours: the original's front end only writes. They
// answer JSON, 404 for what is not there.

func writeJSON(w http.ResponseWriter, value any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(value)
}

// queryArgs returns the query parameters, or false after answering 400
// when one is missing.
func queryArgs(w http.ResponseWriter, r *http.Request, names ...string) (map[string]string, bool) {
	q := r.URL.Query()
	args := make(map[string]string, len(names))
	for _, name := range names {
		if args[name] = q.Get(name); args[name] == "" {
			http.Error(w, "missing query parameter "+name, http.StatusBadRequest)
			return nil, false
		}
	}
	return args, true
}

// pageBounds reads an optional start and stop, 0 and 10 by default.
func pageBounds(w http.ResponseWriter, r *http.Request, startName, stopName string) (start, stop int32, ok bool) {
	start, stop = 0, 10
	for name, into := range map[string]*int32{startName: &start, stopName: &stop} {
		if text := r.URL.Query().Get(name); text != "" {
			n, err := parseInt32(text)
			if err != nil {
				http.Error(w, name+" must be an integer", http.StatusBadRequest)
				return 0, 0, false
			}
			*into = n
		}
	}
	return start, stop, true
}

func parseInt32(text string) (int32, error) {
	n, err := strconv.ParseInt(text, 10, 32)
	return int32(n), err
}

func (f *Frontend) readMovieID(w http.ResponseWriter, r *http.Request) {
	args, ok := queryArgs(w, r, "title")
	if !ok {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	movieID, err := f.MovieID.GetMovieId(ctx, newReqID(), args["title"])
	if err != nil {
		f.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]string{"movie_id": movieID})
}

func (f *Frontend) readUser(w http.ResponseWriter, r *http.Request) {
	args, ok := queryArgs(w, r, "username")
	if !ok {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	user, err := f.User.GetUser(ctx, newReqID(), args["username"])
	if err != nil {
		f.fail(w, r, err)
		return
	}
	writeJSON(w, user)
}

func (f *Frontend) readPage(w http.ResponseWriter, r *http.Request) {
	args, ok := queryArgs(w, r, "movie_id")
	if !ok {
		return
	}
	start, stop, ok := pageBounds(w, r, "review_start", "review_stop")
	if !ok {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	page, err := f.Page.ReadPage(ctx, newReqID(), args["movie_id"], start, stop)
	if err != nil {
		f.fail(w, r, err)
		return
	}
	writeJSON(w, page)
}

func (f *Frontend) readUserReviews(w http.ResponseWriter, r *http.Request) {
	args, ok := queryArgs(w, r, "user_id")
	if !ok {
		return
	}
	userID, err := strconv.ParseInt(args["user_id"], 10, 64)
	if err != nil {
		http.Error(w, "user_id must be an integer", http.StatusBadRequest)
		return
	}
	start, stop, ok := pageBounds(w, r, "start", "stop")
	if !ok {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	reviews, err := f.UserReview.ReadUserReviews(ctx, newReqID(), userID, start, stop)
	if err != nil {
		f.fail(w, r, err)
		return
	}
	writeJSON(w, reviews)
}

func (f *Frontend) readRating(w http.ResponseWriter, r *http.Request) {
	args, ok := queryArgs(w, r, "movie_id")
	if !ok {
		return
	}
	ctx, cancel := f.callContext(r)
	defer cancel()
	tally, err := f.Rating.ReadRating(ctx, newReqID(), args["movie_id"])
	if err != nil {
		f.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]any{"movie_id": tally.MovieID, "sum": tally.Sum, "count": tally.Count})
}
