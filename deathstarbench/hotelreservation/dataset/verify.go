package dataset

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Frontend is the front end's base URL, e.g. http://127.0.0.1:5000.
	Frontend string
	// Client sends the requests; nil means a client of its own.
	Client *http.Client
	// RequestTimeout bounds each request (its answer read whole); 0 means
	// DefaultRequestTimeout. The whole run is bounded by ctx.
	RequestTimeout time.Duration
	// SampledUsers is how many users 1..Users-2 are drawn to log in, on
	// top of the first and the last; 0 means DefaultSampledUsers.
	SampledUsers int
	// Seed draws the sampled users; 0 means 1.
	Seed uint64
	// Progress, when set, gets one line per check as it ends.
	Progress func(line string)
}

// DefaultRequestTimeout bounds one request of Verify: the checks are light
// reads, so a deployment slower than this is taken for a broken one.
const DefaultRequestTimeout = 10 * time.Second

// DefaultSampledUsers is how many drawn users log in.
const DefaultSampledUsers = 20

// VerifyCheck is the outcome of one check.
type VerifyCheck struct {
	Name string
	// Problem is empty when the check passed; else what was wrong and
	// what the front end answered.
	Problem string
}

// VerifyResult lists every check Verify made, in order.
type VerifyResult struct {
	Checks []VerifyCheck
}

// Failed lists the checks that failed.
func (r VerifyResult) Failed() []VerifyCheck {
	var out []VerifyCheck
	for _, c := range r.Checks {
		if c.Problem != "" {
			out = append(out, c)
		}
	}
	return out
}

// The check of /hotels: a night the seed's rate plans cover, at hotel 1's
// position. Geo's five nearest there are hotels 1, 3, 5, 6 and 2 (see
// geoindex.go); 1, 2 and 3 have rate plans, and the search orders them by
// total rate, highest first (139, then 109 twice in geo's order). The
// profiles (names, phone numbers, positions) come from Profiles.
const (
	verifyInDate  = "2015-04-09"
	verifyOutDate = "2015-04-10"
)

var verifyNearHotel1 = []string{"2", "1", "3"}

// verifyDisHotels are the hotels at whose own position "dis" must answer
// that hotel alone: named ones (3's recommendation position differs from
// its geo position) and generated ones at both ends of the line.
var verifyDisHotels = []int{1, 3, 6, 7, 80}

// Verify checks through the front end's HTTP API, reading only (no
// reservation is made), that the deployment serves the seeded data: the
// hotels near hotel 1 with their profiles, the recommendations by rate,
// price and distance, a missing parameter's 400, the logins of the first
// and last user and of users drawn with opts.Seed, and a wrong password's
// refusal. Every check runs (each request bounded by RequestTimeout, all
// by ctx); the error names the first that failed and what it got. A
// cancelled ctx stops the run with ctx's error.
func Verify(ctx context.Context, opts VerifyOptions) (VerifyResult, error) {
	v := &verifier{opts: opts, frontend: strings.TrimRight(opts.Frontend, "/")}
	if v.opts.Client == nil {
		v.opts.Client = &http.Client{}
	}
	if v.opts.RequestTimeout <= 0 {
		v.opts.RequestTimeout = DefaultRequestTimeout
	}
	if v.opts.SampledUsers <= 0 {
		v.opts.SampledUsers = DefaultSampledUsers
	}
	if v.opts.Seed == 0 {
		v.opts.Seed = 1
	}
	if _, err := url.Parse(v.frontend); err != nil || v.frontend == "" {
		return VerifyResult{}, fmt.Errorf("front end %q is not a URL", opts.Frontend)
	}
	profiles := map[string]Profile{}
	for _, p := range Profiles() {
		profiles[p.ID] = p
	}
	v.profiles = profiles

	v.check(ctx, fmt.Sprintf("hotels near hotel 1 on %s..%s are %s", verifyInDate, verifyOutDate, strings.Join(verifyNearHotel1, ", ")),
		"/hotels?"+query("inDate", verifyInDate, "outDate", verifyOutDate, "lat", "37.7867", "lon", "-122.4112"),
		func(a answer) string { return v.hotelsAre(a, verifyNearHotel1, true) })

	rate, price := bestRecommendables()
	v.check(ctx, "recommendations by rate are hotels "+strings.Join(rate, ", "),
		"/recommendations?"+query("require", "rate", "lat", "37.7867", "lon", "-122.4112"),
		func(a answer) string { return v.hotelsAre(a, rate, false) })
	v.check(ctx, "recommendations by price are hotels "+strings.Join(price, ", "),
		"/recommendations?"+query("require", "price", "lat", "37.7867", "lon", "-122.4112"),
		func(a answer) string { return v.hotelsAre(a, price, false) })
	recommendables := Recommendables()
	for _, n := range verifyDisHotels {
		r := recommendables[n-1]
		v.check(ctx, fmt.Sprintf("recommendation by distance at hotel %s's position is hotel %s", r.HotelID, r.HotelID),
			"/recommendations?"+query("require", "dis", "lat", formatFloat(r.Lat), "lon", formatFloat(r.Lon)),
			func(a answer) string { return v.hotelsAre(a, []string{r.HotelID}, false) })
	}

	v.check(ctx, "a search without dates answers 400 \"Please specify inDate/outDate params\"",
		"/hotels?"+query("lat", "37.7867", "lon", "-122.4112"),
		func(a answer) string {
			if a.status != http.StatusBadRequest || a.body != "Please specify inDate/outDate params\n" {
				return "want HTTP 400 with that text"
			}
			return ""
		})

	users := sampleUsers(v.opts.SampledUsers, v.opts.Seed)
	v.checkAll(ctx, fmt.Sprintf("%d seeded users log in (%s, %s and %d drawn with seed %d)",
		len(users), Username(0), Username(Users-1), len(users)-2, v.opts.Seed), users,
		func(n int) (string, string) {
			return Username(n), "/user?" + query("username", Username(n), "password", Password(n))
		},
		func(a answer) string { return messageIs(a, "Login successfully!") })
	v.check(ctx, "a wrong password is refused",
		"/user?"+query("username", Username(1), "password", Password(2)),
		func(a answer) string { return messageIs(a, "Failed. Please check your username and password. ") })

	result := VerifyResult{Checks: v.checks}
	if err := ctx.Err(); err != nil {
		return result, fmt.Errorf("verification stopped after %d checks: %w", len(v.checks), err)
	}
	if failed := result.Failed(); len(failed) > 0 {
		return result, fmt.Errorf("%d of %d checks failed; first: %s: %s", len(failed), len(result.Checks), failed[0].Name, failed[0].Problem)
	}
	return result, nil
}

type verifier struct {
	opts     VerifyOptions
	frontend string
	profiles map[string]Profile
	checks   []VerifyCheck
}

// answer is one response: its status and body (or the error that stood in
// for them).
type answer struct {
	status int
	body   string
	err    error
}

// String shows what was answered: the status and the body's first 200
// bytes, or the error.
func (a answer) String() string {
	if a.err != nil {
		return "no answer: " + a.err.Error()
	}
	body := a.body
	if len(body) > 200 {
		body = body[:200] + "..."
	}
	return fmt.Sprintf("got HTTP %d, body %q", a.status, body)
}

func (v *verifier) get(ctx context.Context, path string) answer {
	ctx, cancel := context.WithTimeout(ctx, v.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.frontend+path, nil)
	if err != nil {
		return answer{err: err}
	}
	resp, err := v.opts.Client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	// An answer of the seed is a few kilobytes; a megabyte is plenty.
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{err: fmt.Errorf("HTTP %d, reading the body: %w", resp.StatusCode, err)}
	}
	return answer{status: resp.StatusCode, body: string(body)}
}

func (v *verifier) record(name, problem string) {
	v.checks = append(v.checks, VerifyCheck{Name: name, Problem: problem})
	if v.opts.Progress == nil {
		return
	}
	if problem == "" {
		v.opts.Progress("ok    " + name)
	} else {
		v.opts.Progress("FAIL  " + name + ": " + problem)
	}
}

// check gets path and judges the answer with judge, which returns what is
// wrong ("" when nothing is). A request that fails or answers other than
// 200 fails the check unless judge accepts it.
func (v *verifier) check(ctx context.Context, name, path string, judge func(answer) string) {
	if ctx.Err() != nil {
		return
	}
	a := v.get(ctx, path)
	v.record(name, judged(a, judge))
}

// checkAll is one check over several requests: it fails at the first
// item whose answer is wrong, naming the item.
func (v *verifier) checkAll(ctx context.Context, name string, items []int, request func(int) (label, path string), judge func(answer) string) {
	for _, item := range items {
		if ctx.Err() != nil {
			return
		}
		label, path := request(item)
		if problem := judged(v.get(ctx, path), judge); problem != "" {
			v.record(name, label+": "+problem)
			return
		}
	}
	v.record(name, "")
}

func judged(a answer, judge func(answer) string) string {
	if a.err != nil {
		return a.String()
	}
	problem := judge(a)
	if problem == "" {
		return ""
	}
	return problem + "; " + a.String()
}

// featureCollection is the GeoJSON the front end answers.
type featureCollection struct {
	Type     *string `json:"type"`
	Features []struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		Geometry struct {
			Type        string    `json:"type"`
			Coordinates []float32 `json:"coordinates"`
		} `json:"geometry"`
		Properties struct {
			Name        string `json:"name"`
			PhoneNumber string `json:"phone_number"`
		} `json:"properties"`
	} `json:"features"`
}

// hotelsAre judges a FeatureCollection answer: its hotels must be want
// (in that order when ordered, else in any order), each with its seeded
// name, phone number and position.
func (v *verifier) hotelsAre(a answer, want []string, ordered bool) string {
	if a.status != http.StatusOK {
		return "want HTTP 200"
	}
	var fc featureCollection
	if err := json.Unmarshal([]byte(a.body), &fc); err != nil {
		return "not a GeoJSON FeatureCollection: " + err.Error()
	}
	if fc.Type == nil || *fc.Type != "FeatureCollection" || fc.Features == nil {
		return `not a GeoJSON FeatureCollection (want "type":"FeatureCollection" and a "features" list)`
	}
	got := make([]string, 0, len(fc.Features))
	for _, f := range fc.Features {
		got = append(got, f.ID)
	}
	sameHotels := slices.Equal(got, want)
	if !ordered {
		sameHotels = slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
	}
	if !sameHotels {
		order := "hotels"
		if ordered {
			order = "hotels, in this order,"
		}
		return fmt.Sprintf("want %s %s, got [%s]", order, strings.Join(want, ", "), strings.Join(got, ", "))
	}
	for _, f := range fc.Features {
		p := v.profiles[f.ID]
		switch {
		case f.Type != "Feature" || f.Geometry.Type != "Point":
			return fmt.Sprintf("hotel %s: want a Feature with a Point geometry, got %q with %q", f.ID, f.Type, f.Geometry.Type)
		case f.Properties.Name != p.Name || f.Properties.PhoneNumber != p.PhoneNumber:
			return fmt.Sprintf("hotel %s: want name %q and phone number %q, got %q and %q", f.ID, p.Name, p.PhoneNumber, f.Properties.Name, f.Properties.PhoneNumber)
		case !slices.Equal(f.Geometry.Coordinates, []float32{p.Address.Lon, p.Address.Lat}):
			return fmt.Sprintf("hotel %s: want coordinates [%v, %v], got %v", f.ID, p.Address.Lon, p.Address.Lat, f.Geometry.Coordinates)
		}
	}
	return ""
}

// messageIs judges a {"message": ...} answer.
func messageIs(a answer, want string) string {
	if a.status != http.StatusOK {
		return "want HTTP 200"
	}
	var m struct {
		Message *string `json:"message"`
	}
	if err := json.Unmarshal([]byte(a.body), &m); err != nil || m.Message == nil {
		return `not a JSON {"message": ...}`
	}
	if *m.Message != want {
		return fmt.Sprintf("want message %q", want)
	}
	return ""
}

// bestRecommendables are the hotels the recommendation service must answer
// for "rate" (every hotel of the highest rate) and "price" (of the lowest
// price), in hotel order.
func bestRecommendables() (rate, price []string) {
	hotels := Recommendables()
	maxRate, minPrice := math.Inf(-1), math.Inf(1)
	for _, h := range hotels {
		maxRate, minPrice = math.Max(maxRate, h.Rate), math.Min(minPrice, h.Price)
	}
	for _, h := range hotels {
		if h.Rate == maxRate {
			rate = append(rate, h.HotelID)
		}
		if h.Price == minPrice {
			price = append(price, h.HotelID)
		}
	}
	return rate, price
}

// sampleUsers is users 0 and Users-1 and n others drawn from the rest
// without repeats, with seed.
func sampleUsers(n int, seed uint64) []int {
	n = min(n, Users-2)
	rng := rand.New(rand.NewPCG(seed, 0x407e1))
	drawn := rng.Perm(Users - 2)[:n]
	out := []int{0, Users - 1}
	for _, d := range drawn {
		out = append(out, d+1)
	}
	return out
}

// query encodes key, value pairs in the given order.
func query(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(pairs[i]) + "=" + url.QueryEscape(pairs[i+1]))
	}
	return b.String()
}

// formatFloat writes x so that parsing it gives x back exactly: "dis" at a
// hotel's own position is then at distance 0 from it.
func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
