package workload

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// composeBody is the script's body, its fields in the script's order.
var composeBody = regexp.MustCompile(`^username=username_(\d+)&password=password_(\d+)&title=([^&]+)&rating=(\d+)&text=([0-9A-Za-z]{256})$`)

// isTitle is the set of dataset.Titles.
var isTitle = func() map[string]bool {
	m := map[string]bool{}
	for _, title := range dataset.Titles {
		m[title] = true
	}
	return m
}()

// review is what checkRequest read from one request.
type review struct {
	user, rating int
	title, text  string
}

// checkRequest checks one request against the script's and returns its
// fields; it fails the test on the first difference.
func checkRequest(t *testing.T, req loadgen.Request) review {
	t.Helper()
	if req.Method != "POST" || req.Path != EndpointComposeReview || req.Label != EndpointComposeReview {
		t.Fatalf("%s %s labelled %q, want POST %s", req.Method, req.Path, req.Label, EndpointComposeReview)
	}
	if len(req.Headers) != 1 || req.Headers[0] != (loadgen.Header{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}) {
		t.Fatalf("headers %v, want the form Content-Type only", req.Headers)
	}
	m := composeBody.FindStringSubmatch(string(req.Body))
	if m == nil {
		t.Fatalf("body %q is not the script's form", req.Body)
	}
	var r review
	var err error
	if r.user, err = strconv.Atoi(m[1]); err != nil || r.user < 1 || r.user > Users || m[2] != m[1] || m[1] != strconv.Itoa(r.user) {
		t.Fatalf("body %q: want username_N and password_N with the same N in 1..%d", req.Body, Users)
	}
	if u := dataset.UserN(r.user); "username_"+m[1] != u.Username || "password_"+m[2] != u.Password {
		t.Fatalf("body %q: user %d is registered as %s/%s", req.Body, r.user, u.Username, u.Password)
	}
	if r.rating, err = strconv.Atoi(m[4]); err != nil || r.rating < 0 || r.rating > MaxRating || m[4] != strconv.Itoa(r.rating) {
		t.Fatalf("body %q: rating not in 0..%d", req.Body, MaxRating)
	}
	form, err := url.ParseQuery(string(req.Body))
	if err != nil {
		t.Fatalf("body %q: %v", req.Body, err)
	}
	r.title, r.text = form.Get("title"), m[5]
	if !isTitle[r.title] || URLEncode(r.title) != m[3] {
		t.Fatalf("body %q: title %q is not a dataset title escaped as the script escapes it", req.Body, r.title)
	}
	return r
}

func TestComposeReviewRequests(t *testing.T) {
	w, err := FromSpec("media-microservices:compose-review")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkRequest(t, w.Next(rng))
	}
}

// TestDistributions draws enough requests that every user, rating and
// distinct title shows up and their shares are close to uniform; an
// off-by-one at either end of a range fails.
func TestDistributions(t *testing.T) {
	const n = 200000
	rng := rand.New(rand.NewPCG(3, 4))
	users := make(map[int]int)
	ratings := make(map[int]int)
	titles := make(map[string]int)
	chars := make(map[rune]int)
	for range n {
		r := checkRequest(t, ComposeReview(rng))
		users[r.user]++
		ratings[r.rating]++
		titles[r.title]++
		for _, c := range r.text {
			chars[c]++
		}
	}
	if len(users) != Users || len(ratings) != MaxRating+1 || len(chars) != len(textChars) {
		t.Fatalf("%d users, %d ratings, %d text characters drawn; want %d, %d, %d", len(users), len(ratings), len(chars), Users, MaxRating+1, len(textChars))
	}
	// Each rating is expected n/11 = 18182 times, sd 129; the bound is 8 sd.
	for r, c := range ratings {
		if c < n/11-1000 || c > n/11+1000 {
			t.Errorf("rating %d drawn %d times of %d", r, c, n)
		}
	}
	// Each character is expected n*256/62 = 825806 times, sd 900.
	for ch, c := range chars {
		if want := n * TextLength / len(textChars); c < want-8000 || c > want+8000 {
			t.Errorf("character %q drawn %d times, want about %d", ch, c, want)
		}
	}
	// A title is drawn with probability k/1000 where the script lists it
	// k times: expected 200 or 400, sd 14 or 20.
	listed := map[string]int{}
	for _, title := range dataset.Titles {
		listed[title]++
	}
	if len(titles) != len(listed) {
		t.Fatalf("%d distinct titles drawn of %d", len(titles), len(listed))
	}
	for title, c := range titles {
		want := n / len(dataset.Titles) * listed[title]
		if c < want-8*20 || c > want+8*20 {
			t.Errorf("title %q (listed %d times) drawn %d times, want about %d", title, listed[title], c, want)
		}
	}
}

// TestURLEncodeMatchesLua runs an urlEncode of the script's form, a gsub
// over [^%w%.%- ] and one of space to '+', over every title: the Go
// escaping must give the same bytes.
func TestURLEncodeMatchesLua(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString(`
function urlEncode(s)
  s = string.gsub(s, "([^%w%.%- ])", function(c) return string.format("%%%02X", string.byte(c)) end)
  return (string.gsub(s, " ", "+"))
end`); err != nil {
		t.Fatal(err)
	}
	nonASCII := 0
	for i, title := range dataset.Titles {
		if err := L.CallByParam(lua.P{Fn: L.GetGlobal("urlEncode"), NRet: 1, Protect: true}, lua.LString(title)); err != nil {
			t.Fatal(err)
		}
		want := L.Get(-1).String()
		L.Pop(1)
		if got := URLEncode(title); got != want {
			t.Errorf("Titles[%d] %q: Go %q, Lua %q", i, title, got, want)
		}
		if back, err := url.QueryUnescape(want); err != nil || back != title {
			t.Errorf("Titles[%d] %q: %q decodes to %q, %v", i, title, want, back, err)
		}
		if strings.ContainsFunc(title, func(r rune) bool { return r > 127 }) {
			nonASCII++
		}
	}
	if nonASCII == 0 {
		t.Fatal("no title with non-ASCII characters: the multi-byte case went untested")
	}
	if got := URLEncode("Léon: The Professional"); got != "L%C3%A9on%3A+The+Professional" {
		t.Errorf("URLEncode gave %q", got)
	}
}

func TestSameSeedSameRequests(t *testing.T) {
	draw := func(seed uint64) []string {
		rng := rand.New(rand.NewPCG(seed, seed))
		var out []string
		for range 100 {
			out = append(out, string(ComposeReview(rng).Body))
		}
		return out
	}
	if a, b := draw(7), draw(7); !slices.Equal(a, b) {
		t.Fatal("one seed gave two sequences")
	}
	if a, b := draw(7), draw(8); slices.Equal(a, b) {
		t.Fatal("two seeds gave one sequence")
	}
}

func TestFromSpec(t *testing.T) {
	for _, spec := range []string{"compose-review", "media-microservices:compose-review"} {
		if w, err := FromSpec(spec); err != nil || w == nil {
			t.Errorf("FromSpec(%q) = %v, %v", spec, w, err)
		}
	}
	for _, spec := range []string{"media-microservices:nope", "nope", "", "hotel-reservation:compose-review", "compose-review@10"} {
		_, err := FromSpec(spec)
		if err == nil || !strings.Contains(err.Error(), strings.Join(Names, ", ")) {
			t.Errorf("FromSpec(%q): %v, want an error listing %v", spec, err, Names)
		}
	}
}

func TestRegisteredWithLoadgen(t *testing.T) {
	w, err := loadgen.WorkloadByName("media-microservices:compose-review")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.(*MediaMicroservices); !ok {
		t.Errorf("got %#v", w)
	}
	w, err = loadgen.WorkloadByName("media-microservices:nope")
	if err == nil || w != nil || !strings.Contains(err.Error(), "compose-review") {
		t.Errorf("an unknown workload gave %#v, %v", w, err)
	}
}

// TestRunAgainstAServer sends the workload through loadgen to a server that
// reads each request as the front end would, as a form.
func TestRunAgainstAServer(t *testing.T) {
	var mu sync.Mutex
	var bad []string
	seen := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, err := url.ParseQuery(string(body))
		mu.Lock()
		defer mu.Unlock()
		seen++
		if err != nil || r.Method != "POST" || r.URL.Path != EndpointComposeReview || r.ContentLength != int64(len(body)) ||
			r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || len(form) != 5 ||
			!isTitle[form.Get("title")] {
			bad = append(bad, r.Method+" "+r.RequestURI+" "+string(body))
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := FromSpec("compose-review")
	if err != nil {
		t.Fatal(err)
	}
	res, err := loadgen.Run(ctx, loadgen.Config{URL: srv.URL, Threads: 1, Connections: 2, Rate: 100, Duration: time.Second, Workload: w})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("%d requests the server could not read, e.g. %s", len(bad), bad[0])
	}
	if res.Requests < 80 || res.StatusCodes[200] != res.Requests || int64(seen) < res.Requests {
		t.Fatalf("requests %d, statuses %v, server saw %d", res.Requests, res.StatusCodes, seen)
	}
	if len(res.Endpoints) != 1 || res.Endpoints[0].Label != EndpointComposeReview {
		t.Fatalf("endpoints %+v", res.Endpoints)
	}
}
