package mediamicroservices

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mm "github.com/orchbench/orchbench/deathstarbench/mediamicroservices/thrift/gen-go/mediamicro"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// startAll runs every service in this process on in-memory stores, each
// service its own, and returns the front end's base URL.
func startAll(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Start(ctx, ServiceNames(), nil, Settings{StorageMode: "memory", MachineID: 3})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(); cancel() })
	return "http://" + r.Addrs[ServiceFrontend]
}

func post(t *testing.T, target string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(target, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func getJSON(t *testing.T, target string, out any) int {
	t.Helper()
	resp, err := http.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
	}
	return resp.StatusCode
}

func mustPost(t *testing.T, target string, form url.Values) {
	t.Helper()
	if status, body := post(t, target, form); status != http.StatusOK || body != "" {
		t.Fatalf("POST %s %v: %d %q, want an empty 200", target, form, status, body)
	}
}

// Concurrent composes of two users about two movies: every review is
// stored once, each list holds exactly its reviews newest first, and the
// rating tallies add up; the wrk2 script's doubled path is a compose too.
func TestComposeReviewStoresEveryReviewOnce(t *testing.T) {
	fe := startAll(t)
	for _, n := range []string{"1", "2"} {
		mustPost(t, fe+"/wrk2-api/user/register", url.Values{"first_name": {"f" + n}, "last_name": {"l" + n}, "username": {"username_" + n}, "password": {"password_" + n}})
	}
	titles := map[string]string{"Avengers: Endgame": "m1", "Pokémon Detective Pikachu": "m2"}
	for title, id := range titles {
		mustPost(t, fe+"/wrk2-api/movie/register", url.Values{"title": {title}, "movie_id": {id}})
	}
	const composes = 40
	sums := map[string]int64{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range composes {
		user := []string{"username_1", "username_2"}[i%2]
		title := []string{"Avengers: Endgame", "Pokémon Detective Pikachu"}[i%3%2]
		rating := i % 11
		mu.Lock()
		sums[titles[title]] += int64(rating)
		mu.Unlock()
		path := "/wrk2-api/review/compose"
		if i%4 == 0 {
			path += path
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body := post(t, fe+path, url.Values{"title": {title}, "username": {user}, "password": {"x"}, "rating": {strconv.Itoa(rating)}, "text": {"review " + strconv.Itoa(i)}})
			if status != http.StatusOK || body != "" {
				t.Errorf("compose %d: %d %q", i, status, body)
			}
		}()
	}
	wg.Wait()

	seen := map[int64]bool{}
	total := 0
	for title, id := range titles {
		var page mm.Page
		if status := getJSON(t, fe+"/orchbench/page?movie_id=missing", &page); status != http.StatusNotFound {
			t.Fatalf("page of an unknown movie: %d, want 404", status)
		}
		var tally struct{ Sum, Count int64 }
		getJSON(t, fe+"/orchbench/rating?movie_id="+id, &tally)
		if tally.Sum != sums[id] {
			t.Errorf("%s: rating sum %d, want %d", title, tally.Sum, sums[id])
		}
		total += int(tally.Count)
	}
	if total != composes {
		t.Fatalf("rating counts add to %d, want %d", total, composes)
	}
	for _, user := range []string{"username_1", "username_2"} {
		var u mm.User
		if getJSON(t, fe+"/orchbench/user?username="+user, &u) != http.StatusOK {
			t.Fatalf("user %s not found", user)
		}
		var reviews []*mm.Review
		getJSON(t, fe+"/orchbench/user-reviews?user_id="+strconv.FormatInt(u.UserID, 10)+"&stop=100", &reviews)
		if len(reviews) != composes/2 {
			t.Fatalf("%s has %d reviews, want %d", user, len(reviews), composes/2)
		}
		for i, r := range reviews {
			if r.UserID != u.UserID || seen[r.ReviewID] {
				t.Fatalf("%s: review %+v is another user's or seen twice", user, r)
			}
			seen[r.ReviewID] = true
			if i > 0 && (r.Timestamp > reviews[i-1].Timestamp || (r.Timestamp == reviews[i-1].Timestamp && r.ReviewID > reviews[i-1].ReviewID)) {
				t.Fatalf("%s: reviews not newest first at %d", user, i)
			}
		}
	}
	if len(seen) != composes {
		t.Fatalf("%d distinct reviews, want %d", len(seen), composes)
	}
}

// The answers a client can get wrong, as the original gives them.
func TestFrontendAnswersBadRequestsAsTheOriginal(t *testing.T) {
	fe := startAll(t)
	mustPost(t, fe+"/wrk2-api/user/register", url.Values{"first_name": {"f"}, "last_name": {"l"}, "username": {"username_1"}, "password": {"password_1"}})
	mustPost(t, fe+"/wrk2-api/movie/register", url.Values{"title": {"Glass"}, "movie_id": {"m9"}})
	cases := []struct {
		path   string
		form   url.Values
		status int
		body   string
	}{
		{"/wrk2-api/review/compose", url.Values{"title": {"Glass"}, "username": {"username_1"}, "password": {"p"}, "rating": {"5"}}, 400, "Incomplete arguments\n"},
		{"/wrk2-api/review/compose", url.Values{"title": {"Glass"}, "username": {"username_1"}, "password": {"p"}, "rating": {"5"}, "text": {""}}, 400, "Incomplete arguments\n"},
		{"/wrk2-api/review/compose", url.Values{"title": {"Unknown"}, "username": {"username_1"}, "password": {"p"}, "rating": {"5"}, "text": {"t"}}, 500, "Movie Unknown is not registered"},
		{"/wrk2-api/review/compose", url.Values{"title": {"Glass"}, "username": {"nobody"}, "password": {"p"}, "rating": {"5"}, "text": {"t"}}, 500, "User nobody doesn't exist"},
		{"/wrk2-api/user/register", url.Values{"first_name": {"f"}, "last_name": {"l"}, "username": {"username_1"}, "password": {"p"}}, 500, "User username_1 already existed"},
		{"/wrk2-api/user/register", url.Values{"username": {"u"}}, 400, "Incomplete arguments\n"},
		{"/wrk2-api/movie/register", url.Values{"title": {"Glass"}, "movie_id": {"m10"}}, 500, "Movie Glass already existed"},
		{"/wrk2-api/movie/register", url.Values{"title": {"Glass"}}, 400, "Incomplete arguments\n"},
		{"/no/such/route", url.Values{}, 404, "404 page not found\n"},
	}
	for _, c := range cases {
		status, body := post(t, fe+c.path, c.form)
		if status != c.status || !strings.Contains(body, c.body) {
			t.Errorf("POST %s %v: %d %q, want %d with %q", c.path, c.form, status, body, c.status, c.body)
		}
	}
	resp, err := http.Post(fe+"/wrk2-api/plot/write", "application/json", strings.NewReader(`{"plot_id": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("malformed plot: %d, want 400", resp.StatusCode)
	}
}

// The rendezvous on its own: parts in any order, one arriving twice, and a
// counter that expired, against a recording of the three stores.
func TestComposeReviewRendezvous(t *testing.T) {
	ctx := context.Background()
	stored := &recordingStores{}
	s := &ComposeReviewService{Parts: store.NewMemoryCache(), ReviewStorage: stored, UserReview: stored, MovieReview: stored,
		Now: func() time.Time { return time.UnixMilli(1700000000000) }}
	uploads := []func() error{
		func() error { return s.UploadMovieId(ctx, 42, "m1") },
		func() error { return s.UploadText(ctx, 42, "text") },
		func() error { return s.UploadText(ctx, 42, "text") }, // a retried call
		func() error { return s.UploadUserId(ctx, 42, 7) },
		func() error { return s.UploadRating(ctx, 42, 9) },
	}
	for i, upload := range uploads {
		if err := upload(); err != nil {
			t.Fatal(err)
		}
		if stored.count() != 0 {
			t.Fatalf("stored after %d of the parts", i+1)
		}
	}
	if err := s.UploadUniqueId(ctx, 42, 1001); err != nil {
		t.Fatal(err)
	}
	want := mm.Review{ReviewID: 1001, UserID: 7, ReqID: 42, Text: "text", MovieID: "m1", Rating: 9, Timestamp: 1700000000000}
	if stored.count() != 3 || *stored.review != want {
		t.Fatalf("stored %d times, review %+v; want 3 stores of %+v", stored.count(), stored.review, want)
	}
	// Parts that outlived their counter: memcached dropped the counter.
	parts := store.NewMemoryCache()
	s.Parts = parts
	if err := s.UploadText(ctx, 43, "t"); err != nil {
		t.Fatal(err)
	}
	parts.Delete(ctx, "43:counter")
	if err := s.UploadRating(ctx, 43, 1); err != nil {
		t.Fatal(err) // adds a new counter: 1
	}
	var se *mm.ServiceError
	parts.Delete(ctx, "43:counter")
	parts.Add(ctx, "43:counter", []byte("4"), 0)
	if err := s.UploadUserId(ctx, 43, 1); !errors.As(err, &se) || !strings.Contains(se.Message, "expired") {
		t.Fatalf("fifth part with parts missing: %v, want an error saying they expired", err)
	}
}

// recordingStores counts the three stores' calls of compose-review.
type recordingStores struct {
	mu     sync.Mutex
	calls  int
	review *mm.Review
}

func (r *recordingStores) count() int { r.mu.Lock(); defer r.mu.Unlock(); return r.calls }
func (r *recordingStores) record(review *mm.Review) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if review != nil {
		r.review = review
	}
}

func (r *recordingStores) StoreReview(_ context.Context, _ int64, review *mm.Review) error {
	r.record(review)
	return nil
}
func (r *recordingStores) ReadReviews(context.Context, int64, []int64) ([]*mm.Review, error) {
	return nil, nil
}
func (r *recordingStores) UploadUserReview(context.Context, int64, int64, int64, int64) error {
	r.record(nil)
	return nil
}
func (r *recordingStores) ReadUserReviews(context.Context, int64, int64, int32, int32) ([]*mm.Review, error) {
	return nil, nil
}
func (r *recordingStores) UploadMovieReview(context.Context, int64, string, int64, int64) error {
	r.record(nil)
	return nil
}
func (r *recordingStores) ReadMovieReviews(context.Context, int64, string, int32, int32) ([]*mm.Review, error) {
	return nil, nil
}

// A title memcached cannot take as it is still gets a key it accepts.
func TestMemcachedKeysHoldNoSpaces(t *testing.T) {
	for _, title := range []string{"Avengers: Endgame", "Fate/stay night: Heaven’s Feel II. lost butterfly", strings.Repeat("long title ", 40)} {
		key := memcachedKey("movie-id:", title)
		if strings.ContainsAny(key, " \r\n\t") || len(key) > maxMemcachedKey {
			t.Errorf("%q: key %q", title, key)
		}
	}
}
