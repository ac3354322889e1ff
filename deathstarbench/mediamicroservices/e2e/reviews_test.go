//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices"
	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
)

// bigStop is a page's stop past any list's end here: a read of the whole
// list.
const bigStop = "1000000"

// review is one review as the read routes answer it.
type review struct {
	ReviewID  int64  `json:"review_id"`
	UserID    int64  `json:"user_id"`
	ReqID     int64  `json:"req_id"`
	Text      string `json:"text"`
	MovieID   string `json:"movie_id"`
	Rating    int32  `json:"rating"`
	Timestamp int64  `json:"timestamp"`
}

// sent is one compose the front end answered 200. Its text is unique, so
// it finds its review among those read back.
type sent struct {
	user    int // username_<user>
	title   string
	movieID string
	rating  int
	text    string
}

// tally is a movie's ratings as /orchbench/rating answers them.
type tally struct {
	Sum   int64 `json:"sum"`
	Count int64 `json:"count"`
}

// ledger is what the test composed: every review, and per movie the
// ratings since Redis last started empty (the tallies live only there).
type ledger struct {
	mu      sync.Mutex
	reviews []sent
	ratings map[string]tally
	userIDs map[int]int64 // username_<n> -> user_id, looked up once
}

func newLedger() *ledger {
	return &ledger{ratings: map[string]tally{}, userIDs: map[int]int64{}}
}

func (l *ledger) add(c sent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reviews = append(l.reviews, c)
	r := l.ratings[c.movieID]
	l.ratings[c.movieID] = tally{Sum: r.Sum + int64(c.rating), Count: r.Count + 1}
}

// forgetRatings is for a Redis that restarted empty.
func (l *ledger) forgetRatings() { l.ratings = map[string]tally{} }

// draw makes n composes of users 1..users and titles among the first
// titles of dataset.Titles (an index drawn as compose-review.lua draws it,
// so a title listed twice there is one movie), with ratings 0..10. Few
// users and titles give lists of several reviews, written concurrently.
func draw(rng *rand.Rand, n, users, titles int, tag string) []sent {
	out := make([]sent, n)
	for i := range out {
		title := dataset.Titles[rng.IntN(titles)]
		movieID, _ := dataset.MovieID(title)
		out[i] = sent{
			user: 1 + rng.IntN(users), title: title, movieID: movieID, rating: rng.IntN(11),
			text: fmt.Sprintf("%s review %d %x", tag, i, rng.Uint64()),
		}
	}
	return out
}

func (c sent) form() url.Values {
	u := dataset.UserN(c.user)
	return url.Values{"title": {c.title}, "text": {c.text}, "username": {u.Username}, "password": {u.Password},
		"rating": {strconv.Itoa(c.rating)}}
}

// composeAll sends every compose through the front end, concurrency at a
// time; each must answer 200 with an empty body, as the original's does.
func composeAll(t *testing.T, s *stack, l *ledger, composes []sent, concurrency int) {
	t.Helper()
	var (
		mu   sync.Mutex
		bad  []string
		next = make(chan sent)
		wg   sync.WaitGroup
	)
	began := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				status, body := s.compose(c.form())
				if status == http.StatusOK && body == "" {
					l.add(c)
					continue
				}
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%s on %q: %d %q", dataset.UserN(c.user).Username, c.title, status, body))
				mu.Unlock()
			}
		}()
	}
	for _, c := range composes {
		next <- c
	}
	close(next)
	wg.Wait()
	took := time.Since(began)
	t.Logf("%d composes, %d at a time, in %s (%.0f/s)", len(composes), concurrency, took.Round(time.Millisecond),
		float64(len(composes))/took.Seconds())
	if len(bad) > 0 {
		t.Fatalf("%d of %d composes failed, first: %s", len(bad), len(composes), strings.Join(bad[:min(5, len(bad))], "\n"))
	}
}

// userID is username_<n>'s user_id, from /orchbench/user.
func (l *ledger) userID(s *stack, n int) int64 {
	s.t.Helper()
	if id, ok := l.userIDs[n]; ok {
		return id
	}
	var u struct {
		UserID   int64  `json:"user_id"`
		Username string `json:"username"`
	}
	s.getJSON("/orchbench/user?"+url.Values{"username": {dataset.UserN(n).Username}}.Encode(), &u)
	if u.Username != dataset.UserN(n).Username || u.UserID == 0 {
		s.t.Fatalf("/orchbench/user of %s: %+v", dataset.UserN(n).Username, u)
	}
	l.userIDs[n] = u.UserID
	return u.UserID
}

func userReviews(s *stack, userID int64) []review {
	s.t.Helper()
	var reviews []review
	s.getJSON("/orchbench/user-reviews?"+url.Values{"user_id": {strconv.FormatInt(userID, 10)}, "start": {"0"}, "stop": {bigStop}}.Encode(), &reviews)
	return reviews
}

func movieReviews(s *stack, movieID string) []review {
	s.t.Helper()
	var page struct {
		Reviews []review `json:"reviews"`
	}
	s.getJSON("/orchbench/page?"+url.Values{"movie_id": {movieID}, "review_start": {"0"}, "review_stop": {bigStop}}.Encode(), &page)
	return page.Reviews
}

func rating(s *stack, movieID string) tally {
	s.t.Helper()
	var r struct {
		MovieID string `json:"movie_id"`
		tally
	}
	s.getJSON("/orchbench/rating?"+url.Values{"movie_id": {movieID}}.Encode(), &r)
	if r.MovieID != movieID {
		s.t.Fatalf("/orchbench/rating of %s names %q", movieID, r.MovieID)
	}
	return r.tally
}

// checkStored reads every user's and every movie's list of the ledger
// whole and checks that each holds exactly its reviews, as composed,
// newest first; that a review is the same in both lists; and that review
// storage in MongoDB holds exactly these reviews. It returns how many
// review ids it saw.
func checkStored(t *testing.T, s *stack, l *ledger) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	byText := map[string]sent{}
	wantByUser, wantByMovie := map[int][]string{}, map[string][]string{}
	for _, c := range l.reviews {
		byText[c.text] = c
		wantByUser[c.user] = append(wantByUser[c.user], c.text)
		wantByMovie[c.movieID] = append(wantByMovie[c.movieID], c.text)
	}
	idOf := map[string]int64{} // text -> review_id, as first read
	seen := func(where string, list []review, want []string) {
		t.Helper()
		var texts []string
		for i, r := range list {
			c, ok := byText[r.Text]
			switch {
			case !ok:
				t.Errorf("%s: review %d holds a text no compose sent: %+v", where, r.ReviewID, r)
				continue
			case r.UserID != l.userIDs[c.user] || r.MovieID != c.movieID || int(r.Rating) != c.rating || r.ReqID == 0:
				t.Errorf("%s: review %+v, composed by user_id %d (%s) for %s with rating %d", where, r,
					l.userIDs[c.user], dataset.UserN(c.user).Username, c.movieID, c.rating)
			case i > 0 && r.Timestamp > list[i-1].Timestamp:
				t.Errorf("%s: review %d (at %d) after review %d (at %d): not newest first", where, r.ReviewID, r.Timestamp,
					list[i-1].ReviewID, list[i-1].Timestamp)
			}
			if id, ok := idOf[r.Text]; ok && id != r.ReviewID {
				t.Errorf("%s: the review of %q has id %d, and %d in another list", where, r.Text, r.ReviewID, id)
			}
			idOf[r.Text] = r.ReviewID
			texts = append(texts, r.Text)
		}
		slices.Sort(texts)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(texts, want) {
			t.Errorf("%s holds %d reviews, want %d; texts %q, want %q", where, len(texts), len(want), texts, want)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(wantByUser)) {
		id := l.userID(s, n)
		seen(fmt.Sprintf("%s's reviews (user_id %d)", dataset.UserN(n).Username, id), userReviews(s, id), wantByUser[n])
	}
	byUser := len(idOf)
	for _, movieID := range slices.Sorted(maps.Keys(wantByMovie)) {
		seen("the reviews of "+movieID, movieReviews(s, movieID), wantByMovie[movieID])
	}
	if byUser != len(l.reviews) || len(idOf) != len(l.reviews) {
		t.Errorf("%d reviews composed; the users' lists hold %d, with the movies' %d", len(l.reviews), byUser, len(idOf))
	}
	ids := map[int64]bool{}
	for _, id := range idOf {
		ids[id] = true
	}
	if len(ids) != len(idOf) {
		t.Errorf("%d reviews share %d review ids", len(idOf), len(ids))
	}
	stored := storedReviewIDs(t, s)
	if !maps.Equal(stored, ids) {
		t.Errorf("review storage holds %d reviews, want the %d read back", len(stored), len(ids))
	}
	return len(ids)
}

// checkRatings compares each movie's tally with the ratings sent.
func checkRatings(t *testing.T, s *stack, l *ledger) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, movieID := range slices.Sorted(maps.Keys(l.ratings)) {
		if got, want := rating(s, movieID), l.ratings[movieID]; got != want {
			t.Errorf("rating of %s: %+v, want %+v", movieID, got, want)
		}
	}
}

// storedReviewIDs reads the ids of every review in review-storage's
// MongoDB collection, past the services.
func storedReviewIDs(t *testing.T, s *stack) map[int64]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mc, err := mongo.Connect(ctx, options.Client().ApplyURI(s.mongoURI))
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Disconnect(context.Background())
	name := mediamicroservices.ServiceReviewStorage
	cursor, err := mc.Database(name).Collection(name).Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatalf("find in %s.%s: %v", name, name, err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cursor.All(ctx, &docs); err != nil {
		t.Fatalf("read %s.%s: %v", name, name, err)
	}
	ids := map[int64]bool{}
	for _, d := range docs {
		id, err := strconv.ParseInt(d.ID, 10, 64)
		if err != nil || ids[id] {
			t.Fatalf("%s.%s holds _id %q: not a review id, or twice", name, name, d.ID)
		}
		ids[id] = true
	}
	return ids
}
