package dataset_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
)

// fakeFrontend is a test double of the media front end's HTTP API as the
// contract gives it, in memory: enough for the loader and the verifier to
// be tested on their side; the real services are tested end to end
// elsewhere.
type fakeFrontend struct {
	*httptest.Server
	mu       sync.Mutex
	users    map[string]fakeUser
	titles   map[string]string // title → movie id
	casts    map[int64]dataset.CastInfo
	plots    map[int64]string
	infos    map[string]dataset.MovieInfo
	reviews  int
	requests map[string]int // "METHOD path" → count
	// fail, if set, answers a request instead of the fake (status 0: no).
	fail func(r *http.Request) (int, string)
}

type fakeUser struct {
	ID int64
	dataset.User
}

func newFake(t *testing.T) *fakeFrontend {
	f := &fakeFrontend{users: map[string]fakeUser{}, titles: map[string]string{}, casts: map[int64]dataset.CastInfo{},
		plots: map[int64]string{}, infos: map[string]dataset.MovieInfo{}, requests: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeFrontend) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests[r.Method+" "+r.URL.Path]++
	if f.fail != nil {
		if status, body := f.fail(r); status != 0 {
			http.Error(w, body, status)
			return
		}
	}
	form := func(names ...string) ([]string, bool) {
		var values []string
		for _, name := range names {
			v := r.PostFormValue(name)
			if v == "" {
				http.Error(w, "Incomplete arguments", http.StatusBadRequest)
				return nil, false
			}
			values = append(values, v)
		}
		return values, true
	}
	decode := func(v any) bool {
		if err := json.NewDecoder(r.Body).Decode(v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		return true
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /healthz":
		fmt.Fprint(w, "ok")
	case "POST /wrk2-api/user/register":
		v, ok := form("first_name", "last_name", "username", "password")
		if !ok {
			return
		}
		if _, exists := f.users[v[2]]; exists {
			http.Error(w, "User "+v[2]+" already existed", http.StatusInternalServerError)
			return
		}
		f.users[v[2]] = fakeUser{ID: int64(len(f.users) + 1), User: dataset.User{FirstName: v[0], LastName: v[1], Username: v[2], Password: v[3]}}
	case "POST /wrk2-api/movie/register":
		v, ok := form("title", "movie_id")
		if !ok {
			return
		}
		if _, exists := f.titles[v[0]]; exists {
			http.Error(w, "Movie "+v[0]+" already existed", http.StatusInternalServerError)
			return
		}
		f.titles[v[0]] = v[1]
	case "POST /wrk2-api/review/compose":
		if _, ok := form("title", "text", "username", "password", "rating"); ok {
			f.reviews++
		}
	case "POST /wrk2-api/cast-info/write":
		var c dataset.CastInfo
		if decode(&c) {
			f.casts[c.CastInfoID] = c
		}
	case "POST /wrk2-api/plot/write":
		var p dataset.Plot
		if decode(&p) {
			f.plots[p.PlotID] = p.Plot
		}
	case "POST /wrk2-api/movie-info/write":
		var m dataset.MovieInfo
		if decode(&m) {
			f.infos[m.MovieID] = m
		}
	case "GET /orchbench/movie-id":
		id, ok := f.titles[r.FormValue("title")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, map[string]string{"movie_id": id})
	case "GET /orchbench/user":
		u, ok := f.users[r.FormValue("username")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, map[string]any{"user_id": u.ID, "username": u.Username, "first_name": u.FirstName, "last_name": u.LastName})
	case "GET /orchbench/page":
		info, ok := f.infos[r.FormValue("movie_id")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		casts := []dataset.CastInfo{}
		for _, c := range info.Casts {
			if ci, ok := f.casts[c.CastInfoID]; ok {
				casts = append(casts, ci)
			}
		}
		writeJSON(w, map[string]any{"movie_info": info, "cast_infos": casts, "plot": f.plots[info.PlotID], "reviews": []any{}})
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// state is everything the fake holds, to compare before and after.
func (f *fakeFrontend) state() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := json.Marshal([]any{f.users, f.titles, f.casts, f.plots, f.infos, f.reviews})
	if err != nil {
		panic(err)
	}
	return string(data)
}

// writes counts the requests other than GETs.
func (f *fakeFrontend) writes() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, n := range f.requests {
		if k[:4] != "GET " {
			out[k] = n
		}
	}
	return out
}

func (f *fakeFrontend) change(do func(f *fakeFrontend)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	do(f)
}

// copyFrom makes f hold what g holds, so that one load serves several
// tests that each change a copy.
func (f *fakeFrontend) copyFrom(g *fakeFrontend) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	f.users, f.titles, f.casts, f.plots, f.infos, f.reviews = maps.Clone(g.users), maps.Clone(g.titles), maps.Clone(g.casts), maps.Clone(g.plots), maps.Clone(g.infos), g.reviews
}

func (f *fakeFrontend) resetCounts() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = map[string]int{}
}
