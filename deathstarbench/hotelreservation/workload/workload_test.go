package workload

import (
	"math/rand/v2"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
)

var (
	dateText = regexp.MustCompile(`^2015-04-(\d\d)$`)
	// Every point is on a 0.001 grid, so %.14g prints at most three
	// decimals; Go's shortest form would print 37.806999999999995.
	coordText = regexp.MustCompile(`^-?\d+(\.\d{1,3})?$`)
)

// checked is what checkRequest learned from one request.
type checked struct {
	label, require string
	in, out, hotel int
	user           int
}

// checkRequest parses req as net/url does and checks its parameters
// against the script's ranges; it fails the test on the first violation.
func checkRequest(t *testing.T, req loadgen.Request) checked {
	t.Helper()
	u, err := url.Parse(req.Path)
	if err != nil {
		t.Fatalf("%s does not parse: %v", req.Path, err)
	}
	if u.IsAbs() || u.Host != "" || u.Path != req.Label {
		t.Fatalf("%s: want an origin-form target with path %s", req.Path, req.Label)
	}
	if req.Body != nil || len(req.Headers) != 0 {
		t.Fatalf("%s: body %q, headers %v; the script sends neither", req.Path, req.Body, req.Headers)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		t.Fatalf("%s: query does not parse: %v", req.Path, err)
	}
	c := checked{label: req.Label}
	day := func(key string) int {
		m := dateText.FindStringSubmatch(q.Get(key))
		if m == nil {
			t.Fatalf("%s: %s=%q is not 2015-04-DD", req.Path, key, q.Get(key))
		}
		d, _ := strconv.Atoi(m[1])
		return d
	}
	coord := func(key string, lo, hi float64) {
		s := q.Get(key)
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !coordText.MatchString(s) || x < lo-1e-9 || x > hi+1e-9 {
			t.Fatalf("%s: %s=%q, want a number of at most 3 decimals in [%g, %g]", req.Path, key, s, lo, hi)
		}
	}
	user := func() int {
		name := q.Get("username")
		n, err := strconv.Atoi(strings.TrimPrefix(name, UserPrefix))
		if !strings.HasPrefix(name, UserPrefix) || err != nil || n < 0 || n >= Users || name != Username(n) {
			t.Fatalf("%s: username %q, want Cornell_0..Cornell_500", req.Path, name)
		}
		if p := q.Get("password"); p != strings.Repeat(strconv.Itoa(n), 10) {
			t.Fatalf("%s: password %q for user %d", req.Path, p, n)
		}
		return n
	}
	keys := func(want ...string) {
		if len(q) != len(want) {
			t.Fatalf("%s: %d parameters, want %v", req.Path, len(q), want)
		}
		for _, k := range want {
			if len(q[k]) != 1 {
				t.Fatalf("%s: parameter %s appears %d times", req.Path, k, len(q[k]))
			}
		}
	}
	switch req.Label {
	case EndpointSearch:
		keys("inDate", "outDate", "lat", "lon")
		c.in, c.out = day("inDate"), day("outDate")
		if req.Method != "GET" || c.in < 9 || c.in > 23 || c.out <= c.in || c.out > 24 {
			t.Fatalf("%s %s: days %d..%d", req.Method, req.Path, c.in, c.out)
		}
		coord("lat", 37.783, 38.2645)
		coord("lon", -122.252, -121.927)
	case EndpointRecommend:
		keys("require", "lat", "lon")
		c.require = q.Get("require")
		if req.Method != "GET" || (c.require != "dis" && c.require != "rate" && c.require != "price") {
			t.Fatalf("%s %s", req.Method, req.Path)
		}
		coord("lat", 37.783, 38.2645)
		coord("lon", -122.252, -121.927)
	case EndpointLogin:
		keys("username", "password")
		if req.Method != "POST" {
			t.Fatalf("%s %s", req.Method, req.Path)
		}
		c.user = user()
	case EndpointReserve:
		keys("inDate", "outDate", "lat", "lon", "hotelId", "customerName", "username", "password", "number")
		c.in, c.out = day("inDate"), day("outDate")
		if req.Method != "POST" || c.in < 9 || c.in > 23 || c.out <= c.in || c.out > c.in+5 || c.out > 28 {
			t.Fatalf("%s %s: days %d..%d", req.Method, req.Path, c.in, c.out)
		}
		if !strings.Contains(req.Path, "&lat=nil&lon=nil&") || q.Get("number") != "1" {
			t.Fatalf("%s: want lat=nil&lon=nil and number=1 as the script sends", req.Path)
		}
		var err error
		c.hotel, err = strconv.Atoi(q.Get("hotelId"))
		if err != nil || c.hotel < 1 || c.hotel > Hotels {
			t.Fatalf("%s: hotelId %q", req.Path, q.Get("hotelId"))
		}
		c.user = user()
		if q.Get("customerName") != q.Get("username") {
			t.Fatalf("%s: customerName differs from username", req.Path)
		}
	default:
		t.Fatalf("unknown label %q for %s %s", req.Label, req.Method, req.Path)
	}
	return c
}

func TestMixedShares(t *testing.T) {
	w, err := FromSpec("hotel-reservation:mixed")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 200000
	counts := map[string]int{}
	requires := map[string]int{}
	for range n {
		c := checkRequest(t, w.Next(rng))
		counts[c.label]++
		if c.require != "" {
			requires[c.require]++
		}
	}
	// The binomial standard deviation of the search share is 0.11
	// points; the bound is 0.3.
	for label, want := range map[string]float64{
		EndpointSearch: MixedSearchShare, EndpointRecommend: MixedRecommendShare,
		EndpointLogin: MixedLoginShare, EndpointReserve: MixedReserveShare,
	} {
		got := float64(counts[label]) / n
		t.Logf("%-16s %6d  %.3f %%", label, counts[label], 100*got)
		if got < want-0.003 || got > want+0.003 {
			t.Errorf("%s share %.4f, want %.3f ± 0.003 (counts %v)", label, got, want, counts)
		}
	}
	recs := counts[EndpointRecommend]
	for require, want := range map[string]float64{"dis": 0.33, "rate": 0.33, "price": 0.34} {
		got := float64(requires[require]) / float64(recs)
		t.Logf("require=%-5s %6d  %.2f %%", require, requires[require], 100*got)
		if got < want-0.01 || got > want+0.01 {
			t.Errorf("require=%s share %.4f of recommendations, want %.2f ± 0.01 (%v)", require, got, want, requires)
		}
	}
}

func TestSingleEndpointWorkloads(t *testing.T) {
	for name, label := range map[string]string{
		"search": EndpointSearch, "recommend": EndpointRecommend, "login": EndpointLogin, "reserve": EndpointReserve,
	} {
		w, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 500 {
			if req := w.Next(rng); req.Label != label {
				t.Fatalf("%s produced %s %s", name, req.Method, req.Path)
			}
		}
	}
}

// TestRangesAreCovered draws enough of each kind that both ends of every
// range show up, so an off-by-one in either direction fails.
func TestRangesAreCovered(t *testing.T) {
	draw := func(name string, n int, each func(checked)) {
		w, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		for range n {
			each(checkRequest(t, w.Next(rng)))
		}
	}
	type span struct{ lo, hi int }
	widen := func(s *span, x int) {
		s.lo, s.hi = min(s.lo, x), max(s.hi, x)
	}
	in, out := span{99, -1}, span{99, -1}
	draw("search", 20000, func(c checked) { widen(&in, c.in); widen(&out, c.out) })
	if in != (span{9, 23}) || out != (span{10, 24}) {
		t.Errorf("search days in %v out %v, want 9..23 and 10..24", in, out)
	}

	in, out = span{99, -1}, span{99, -1}
	hotels, users, stays := span{999, -1}, span{999, -1}, map[int]bool{}
	draw("reserve", 40000, func(c checked) {
		widen(&in, c.in)
		widen(&out, c.out)
		widen(&hotels, c.hotel)
		widen(&users, c.user)
		stays[c.out-c.in] = true
	})
	if in != (span{9, 23}) || out != (span{10, 28}) || hotels != (span{1, Hotels}) || users != (span{0, Users - 1}) || len(stays) != 5 {
		t.Errorf("reserve days in %v out %v, hotels %v, users %v, stays %v", in, out, hotels, users, stays)
	}

	users = span{999, -1}
	draw("login", 40000, func(c checked) { widen(&users, c.user) })
	if users != (span{0, Users - 1}) {
		t.Errorf("login users %v, want 0..%d", users, Users-1)
	}
}

func TestLocationMatchesLuaText(t *testing.T) {
	lats, lons := map[string]bool{}, map[string]bool{}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 50000 {
		lat, lon := Location(rng)
		lats[lat], lons[lon] = true, true
	}
	if len(lats) != 482 || len(lons) != 326 {
		t.Fatalf("%d distinct latitudes and %d longitudes, want 482 and 326", len(lats), len(lons))
	}
	// The grid's ends and points where Go's shortest form and %.14g part:
	// 38.0235 + (24 - 240.5)/1000 is 37.806999999999995 in full.
	for _, want := range []string{"37.783", "38.264", "37.807", "38"} {
		if !lats[want] {
			t.Errorf("latitude %s never drawn", want)
		}
	}
	for _, want := range []string{"-122.252", "-121.927", "-122.186"} {
		if !lons[want] {
			t.Errorf("longitude %s never drawn", want)
		}
	}
}

func TestPassword(t *testing.T) {
	for n, want := range map[int]string{0: "0000000000", 7: "7777777777", 12: "12121212121212121212", 500: strings.Repeat("500", 10)} {
		if got := Password(n); got != want {
			t.Errorf("Password(%d) = %q, want %q", n, got, want)
		}
	}
	if Username(42) != "Cornell_42" {
		t.Errorf("Username(42) = %q", Username(42))
	}
}

func TestFromSpec(t *testing.T) {
	for _, spec := range []string{"mixed", "hotel-reservation:mixed"} {
		w, err := FromSpec(spec)
		if err != nil || w.SearchShare != MixedSearchShare || w.RecommendShare != MixedRecommendShare ||
			w.LoginShare != MixedLoginShare || w.ReserveShare != MixedReserveShare {
			t.Errorf("FromSpec(%q) = %+v, %v", spec, w, err)
		}
	}
	for _, spec := range []string{"reserve", "hotel-reservation:reserve"} {
		if w, err := FromSpec(spec); err != nil || w.ReserveShare != 1 || w.SearchShare+w.RecommendShare+w.LoginShare != 0 {
			t.Errorf("FromSpec(%q) = %+v, %v", spec, w, err)
		}
	}
	for _, spec := range []string{"hotel-reservation:nope", "nope", "", "social-network:mixed", "mixed@501"} {
		_, err := FromSpec(spec)
		if err == nil || !strings.Contains(err.Error(), strings.Join(Names, ", ")) {
			t.Errorf("FromSpec(%q): %v, want an error listing %v", spec, err, Names)
		}
	}
}

func TestRegisteredWithLoadgen(t *testing.T) {
	w, err := loadgen.WorkloadByName("hotel-reservation:mixed")
	if err != nil {
		t.Fatal(err)
	}
	if hr, ok := w.(*HotelReservation); !ok || hr.SearchShare != MixedSearchShare {
		t.Errorf("got %#v", w)
	}
	if w, err := loadgen.WorkloadByName("hotel-reservation:login"); err != nil || w.Next(rand.New(rand.NewPCG(1, 1))).Label != EndpointLogin {
		t.Errorf("hotel-reservation:login: %v", err)
	}
	w, err = loadgen.WorkloadByName("hotel-reservation:nope")
	if err == nil || w != nil || !strings.Contains(err.Error(), "mixed, search") {
		t.Errorf("an unknown mix gave %#v, %v", w, err)
	}
}
