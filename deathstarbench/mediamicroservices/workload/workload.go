// Package workload generates the request of DeathStarBench's wrk2 script
// for the media microservices (compose-review.lua) as a loadgen workload:
// the same endpoint and the same form body, its fields drawn from the same
// ranges and the title escaped byte for byte as the script escapes it.
package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/loadgen"
)

// EndpointComposeReview is the endpoint label, the API path as the hotel's
// and social network's labels are.
const EndpointComposeReview = "/wrk2-api/review/compose"

// The population the script draws from, which the dataset registers.
const (
	// Users is the number of accounts the dataset registers and the script
	// draws from: username_1..username_1000, each with password password_N.
	Users = dataset.DefaultUsers
	// Ratings run from 0 to MaxRating.
	MaxRating = 10
	// TextLength is the length of a review's random text.
	TextLength = 256
)

// textChars is the script's character table; its order does not matter
// to a uniform draw, it is kept for the reader comparing the two.
const textChars = "qwertyuiopasdfghjklzxcvbnmQWERTYUIOPASDFGHJKLZXCVBNM1234567890"

// Names lists the workloads ByName knows.
var Names = []string{"compose-review"}

// escapedTitles are dataset.Titles as the script sends them, escaped once
// here rather than on every request.
var escapedTitles = func() []string {
	out := make([]string, len(dataset.Titles))
	for i, t := range dataset.Titles {
		out[i] = URLEncode(t)
	}
	return out
}()

var formHeaders = []loadgen.Header{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}}

// MediaMicroservices is a loadgen.Workload sending compose-review.lua's
// request. The script targets url .. "/wrk2-api/review/compose", repeating
// the route when the URL names it; this sends the route once, in origin
// form, which the front end routes the same (its routes are prefixes).
type MediaMicroservices struct{}

// Next implements loadgen.Workload.
func (*MediaMicroservices) Next(rng *rand.Rand) loadgen.Request { return ComposeReview(rng) }

// ComposeReview is POST /wrk2-api/review/compose with the script's form: a
// title drawn uniformly from the script's 1000 (a title listed twice is
// twice as likely), a user 1..1000 with that user's password, a rating
// 0..10 and 256 characters drawn from letters and digits. The script draws
// them in this order.
func ComposeReview(rng *rand.Rand) loadgen.Request {
	title := escapedTitles[rng.IntN(len(escapedTitles))]
	user := strconv.Itoa(1 + rng.IntN(Users))
	rating := rng.IntN(MaxRating + 1)

	body := make([]byte, 0, 64+len(title)+TextLength)
	body = append(body, "username=username_"...)
	body = append(body, user...)
	body = append(body, "&password=password_"...)
	body = append(body, user...)
	body = append(body, "&title="...)
	body = append(body, title...)
	body = append(body, "&rating="...)
	body = strconv.AppendInt(body, int64(rating), 10)
	body = append(body, "&text="...)
	for range TextLength {
		body = append(body, textChars[rng.IntN(len(textChars))])
	}
	return loadgen.Request{Method: "POST", Path: EndpointComposeReview, Headers: formHeaders, Body: body, Label: EndpointComposeReview}
}

// URLEncode escapes s as the script's urlEncode does: ASCII letters and
// digits, '.', '-' and space stay (Lua's %w is ASCII in the C locale), space
// then becomes '+', and every other byte, each byte of a multi-byte
// character included, becomes %XX in upper-case hex. The result decodes as
// a form value to s.
func URLEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) * 3)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			b.WriteByte('+')
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '.', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// ByName returns the named workload.
func ByName(name string) (*MediaMicroservices, error) {
	if name != "compose-review" {
		return nil, fmt.Errorf("unknown media-microservices workload %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	return &MediaMicroservices{}, nil
}

// FromSpec parses "media-microservices:NAME" ("media-microservices:" is
// optional), e.g. "media-microservices:compose-review".
func FromSpec(spec string) (*MediaMicroservices, error) {
	return ByName(strings.TrimPrefix(spec, "media-microservices:"))
}

var _ loadgen.Workload = (*MediaMicroservices)(nil)
