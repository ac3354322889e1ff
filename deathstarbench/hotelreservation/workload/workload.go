// Package workload generates the request mix of DeathStarBench's wrk2
// script for the hotel reservation application (mixed-workload_type_1.lua)
// as loadgen workloads: same endpoints, same shares, same parameter
// distributions and the same query text on the wire.
package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation/dataset"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// Endpoint labels, one per API path (the path without its query).
const (
	EndpointSearch    = "/hotels"
	EndpointRecommend = "/recommendations"
	EndpointLogin     = "/user"
	EndpointReserve   = "/reservation"
)

// Shares of the mixed workload, as in mixed-workload_type_1.lua.
const (
	MixedSearchShare    = 0.60
	MixedRecommendShare = 0.39
	MixedLoginShare     = 0.005
	MixedReserveShare   = 0.005
)

// The population the script draws from and the service's seed creates.
const (
	// Users is the number of accounts, UserPrefix+"0" to UserPrefix+"500".
	Users = dataset.Users
	// UserPrefix starts every user name.
	UserPrefix = dataset.UserPrefix
	// Hotels is the number of hotels, IDs 1..Hotels.
	Hotels = dataset.Hotels
)

// Ranges of the drawn parameters, as in the script.
const (
	firstInDay     = 9 // check-in is on April 9..23, 2015
	lastInDay      = 23
	lastSearchOut  = 24 // a search checks out by the 24th
	maxReserveStay = 5  // a reservation lasts 1..5 nights
	// Latitude is latCenter + (0..481 - 240.5)/1000, longitude lonCenter +
	// (0..325 - 157)/1000.
	latCenter, latSteps, latOffset = 38.0235, 482, 240.5
	lonCenter, lonSteps, lonOffset = -122.095, 326, 157.0
	// require is "dis" below the first bound, "rate" below the second,
	// "price" above.
	requireDisBound, requireRateBound = 0.33, 0.66
)

// Names lists the workloads ByName knows.
var Names = []string{"mixed", "search", "recommend", "login", "reserve"}

// HotelReservation is a loadgen.Workload over the four endpoints. Its
// requests carry no headers and no body, as the script's do (an empty
// header table, a nil body); loadgen adds Host, and -H headers if given.
type HotelReservation struct {
	// The request shares; they should sum to 1. Whatever is left after
	// the first three goes to reservations.
	SearchShare, RecommendShare, LoginShare, ReserveShare float64
}

// Next implements loadgen.Workload, comparing one uniform draw with the
// running sums of the shares as the script does.
func (w *HotelReservation) Next(rng *rand.Rand) loadgen.Request {
	coin := rng.Float64()
	switch {
	case coin < w.SearchShare:
		return Search(rng)
	case coin < w.SearchShare+w.RecommendShare:
		return Recommend(rng)
	case coin < w.SearchShare+w.RecommendShare+w.LoginShare:
		return Login(rng)
	default:
		return Reserve(rng)
	}
}

// Search is GET /hotels for a stay of at least one night between the 9th
// and the 24th, around a point drawn as Location draws it.
func Search(rng *rand.Rand) loadgen.Request {
	in := between(rng, firstInDay, lastInDay)
	out := between(rng, in+1, lastSearchOut)
	lat, lon := Location(rng)
	path := EndpointSearch + "?inDate=" + date(in) + "&outDate=" + date(out) + "&lat=" + lat + "&lon=" + lon
	return loadgen.Request{Method: "GET", Path: path, Label: EndpointSearch}
}

// Recommend is GET /recommendations, requiring "dis", "rate" or "price"
// with shares 33, 33 and 34 %.
func Recommend(rng *rand.Rand) loadgen.Request {
	require := "price"
	switch coin := rng.Float64(); {
	case coin < requireDisBound:
		require = "dis"
	case coin < requireRateBound:
		require = "rate"
	}
	lat, lon := Location(rng)
	path := EndpointRecommend + "?require=" + require + "&lat=" + lat + "&lon=" + lon
	return loadgen.Request{Method: "GET", Path: path, Label: EndpointRecommend}
}

// Login is POST /user with a user's name and password in the query.
func Login(rng *rand.Rand) loadgen.Request {
	n := rng.IntN(Users)
	path := EndpointLogin + "?username=" + Username(n) + "&password=" + Password(n)
	return loadgen.Request{Method: "POST", Path: path, Label: EndpointLogin}
}

// Reserve is POST /reservation of one room for 1..5 nights from a day
// between the 9th and the 23rd, at a hotel 1..Hotels, for a user drawn as
// Login draws one. The script's reserve function reads lat and lon that it
// never defines, so it sends the text "nil" for both; so does this.
func Reserve(rng *rand.Rand) loadgen.Request {
	in := between(rng, firstInDay, lastInDay)
	out := in + between(rng, 1, maxReserveStay)
	hotel := between(rng, 1, Hotels)
	n := rng.IntN(Users)
	user := Username(n)
	path := EndpointReserve + "?inDate=" + date(in) + "&outDate=" + date(out) +
		"&lat=nil&lon=nil&hotelId=" + strconv.Itoa(hotel) +
		"&customerName=" + user + "&username=" + user + "&password=" + Password(n) + "&number=1"
	return loadgen.Request{Method: "POST", Path: path, Label: EndpointReserve}
}

// Location draws a point on the script's grid around San Francisco's bay,
// latitudes 37.783..38.264 and longitudes -122.252..-121.927 in steps of
// 0.001, computed with the script's arithmetic and printed as Lua's
// tostring prints a number (%.14g), so the text is the script's.
func Location(rng *rand.Rand) (lat, lon string) {
	la := latCenter + (float64(rng.IntN(latSteps))-latOffset)/1000.0
	lo := lonCenter + (float64(rng.IntN(lonSteps))-lonOffset)/1000.0
	return luaNumber(la), luaNumber(lo)
}

// Username is the name of user n, as the services seed it.
func Username(n int) string { return dataset.Username(n) }

// Password is user n's password, as the services seed it.
func Password(n int) string { return dataset.Password(n) }

// between draws an integer uniformly from lo..hi, both included, as Lua's
// math.random(lo, hi) does.
func between(rng *rand.Rand, lo, hi int) int { return lo + rng.IntN(hi-lo+1) }

// date is day of April 2015 as the script writes it, with two digits.
func date(day int) string {
	if day < 10 {
		return "2015-04-0" + strconv.Itoa(day)
	}
	return "2015-04-" + strconv.Itoa(day)
}

// luaNumber formats x as Lua 5.1 and LuaJIT's tostring do, "%.14g".
func luaNumber(x float64) string { return strconv.FormatFloat(x, 'g', 14, 64) }

// ByName returns the named workload.
func ByName(name string) (*HotelReservation, error) {
	w := &HotelReservation{}
	switch name {
	case "mixed":
		w.SearchShare, w.RecommendShare, w.LoginShare, w.ReserveShare = MixedSearchShare, MixedRecommendShare, MixedLoginShare, MixedReserveShare
	case "search":
		w.SearchShare = 1
	case "recommend":
		w.RecommendShare = 1
	case "login":
		w.LoginShare = 1
	case "reserve":
		w.ReserveShare = 1
	default:
		return nil, fmt.Errorf("unknown hotel-reservation workload %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	return w, nil
}

// FromSpec parses "hotel-reservation:NAME" ("hotel-reservation:" is
// optional), e.g. "hotel-reservation:mixed".
func FromSpec(spec string) (*HotelReservation, error) {
	return ByName(strings.TrimPrefix(spec, "hotel-reservation:"))
}

var _ loadgen.Workload = (*HotelReservation)(nil)
