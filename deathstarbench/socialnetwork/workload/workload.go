// Package workload generates the request mixes of DeathStarBench's wrk2
// scripts for the social network (mixed-workload.lua, compose-post.lua,
// read-home-timeline.lua, read-user-timeline.lua) as loadgen workloads:
// same endpoints, same parameter distributions, same body encoding.
package workload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// DefaultUsers is the user count of the socfb-Reed98 graph that
// DeathStarBench loads, and its scripts' default max_user_index.
const DefaultUsers = 962

// Endpoint labels, one per API path.
const (
	EndpointComposePost      = "/wrk2-api/post/compose"
	EndpointReadHomeTimeline = "/wrk2-api/home-timeline/read"
	EndpointReadUserTimeline = "/wrk2-api/user-timeline/read"
)

// Shares of the mixed workload, as in mixed-workload.lua.
const (
	MixedReadHomeShare = 0.60
	MixedReadUserShare = 0.30
	MixedComposeShare  = 0.10
)

// Names lists the workloads ByName knows.
var Names = []string{"mixed", "compose-post", "read-home-timeline", "read-user-timeline"}

// SocialNetwork is a loadgen.Workload over users 0..Users-1.
type SocialNetwork struct {
	// Users is the scripts' max_user_index: IDs are drawn uniformly from
	// 0..Users-1, the IDs init_social_graph.py registers.
	Users int
	// HomeShare, UserShare and ComposeShare are the request shares; they
	// should sum to 1.
	HomeShare, UserShare, ComposeShare float64
}

var formHeaders = []loadgen.Header{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}}

// Next implements loadgen.Workload.
func (w *SocialNetwork) Next(rng *rand.Rand) loadgen.Request {
	coin := rng.Float64()
	switch {
	case coin < w.HomeShare:
		return w.readTimeline(rng, EndpointReadHomeTimeline)
	case coin < w.HomeShare+w.UserShare:
		return w.readTimeline(rng, EndpointReadUserTimeline)
	default:
		return w.ComposePost(rng)
	}
}

func (w *SocialNetwork) users() int { return max(w.Users, 1) }

// readTimeline asks for 10 posts from a start drawn from 0..100.
func (w *SocialNetwork) readTimeline(rng *rand.Rand, endpoint string) loadgen.Request {
	userID := rng.IntN(w.users())
	start := rng.IntN(101)
	path := fmt.Sprintf("%s?user_id=%d&start=%d&stop=%d", endpoint, userID, start, start+10)
	return loadgen.Request{Method: "GET", Path: path, Headers: formHeaders, Label: endpoint}
}

// ComposePost builds a compose request as the Lua scripts do: 256 random
// characters, then 1..6 mentions of other users, 1..6 URLs of 64 random
// characters and 1..5 media of 18-digit IDs (the scripts' loops run from 0
// to the drawn count inclusive). Like the scripts, the body is sent
// without percent-encoding.
func (w *SocialNetwork) ComposePost(rng *rand.Rand) loadgen.Request {
	users := w.users()
	userIndex := rng.IntN(users)
	var text strings.Builder
	text.Grow(256 + 6*20 + 6*72)
	appendRandom(&text, rng, alphanumeric, 256)
	mentions := rng.IntN(6)
	for range mentions + 1 {
		mentioned := rng.IntN(users)
		for users > 1 && mentioned == userIndex {
			mentioned = rng.IntN(users)
		}
		text.WriteString(" @username_")
		text.WriteString(strconv.Itoa(mentioned))
	}
	urls := rng.IntN(6)
	for range urls + 1 {
		text.WriteString(" http://")
		appendRandom(&text, rng, alphanumeric, 64)
	}
	media := rng.IntN(5)
	var ids, types strings.Builder
	ids.WriteByte('[')
	types.WriteByte('[')
	for i := range media + 1 {
		if i > 0 {
			ids.WriteByte(',')
			types.WriteByte(',')
		}
		ids.WriteByte('"')
		appendRandom(&ids, rng, decimal, 18)
		ids.WriteByte('"')
		types.WriteString(`"png"`)
	}
	ids.WriteByte(']')
	types.WriteByte(']')

	body := "username=username_" + strconv.Itoa(userIndex) +
		"&user_id=" + strconv.Itoa(userIndex) +
		"&text=" + text.String() +
		"&media_ids=" + ids.String() +
		"&media_types=" + types.String() +
		"&post_type=0"
	return loadgen.Request{Method: "POST", Path: EndpointComposePost, Headers: formHeaders, Body: []byte(body), Label: EndpointComposePost}
}

const (
	alphanumeric = "qwertyuiopasdfghjklzxcvbnmQWERTYUIOPASDFGHJKLZXCVBNM1234567890"
	decimal      = "1234567890"
)

func appendRandom(b *strings.Builder, rng *rand.Rand, alphabet string, n int) {
	for range n {
		b.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
}

// ByName returns a workload over DefaultUsers users.
func ByName(name string) (*SocialNetwork, error) { return New(name, DefaultUsers) }

// New returns the named workload over users users.
func New(name string, users int) (*SocialNetwork, error) {
	if users < 1 {
		return nil, fmt.Errorf("workload %s: user count %d is below 1", name, users)
	}
	w := &SocialNetwork{Users: users}
	switch name {
	case "mixed":
		w.HomeShare, w.UserShare, w.ComposeShare = MixedReadHomeShare, MixedReadUserShare, MixedComposeShare
	case "compose-post":
		w.ComposeShare = 1
	case "read-home-timeline":
		w.HomeShare = 1
	case "read-user-timeline":
		w.UserShare = 1
	default:
		return nil, fmt.Errorf("unknown social-network workload %q (want one of %s)", name, strings.Join(Names, ", "))
	}
	return w, nil
}

// FromSpec parses "social-network:NAME@USERS" ("social-network:" and
// "@USERS" are optional), e.g. "social-network:mixed@962".
func FromSpec(spec string) (*SocialNetwork, error) {
	name := strings.TrimPrefix(spec, "social-network:")
	users := DefaultUsers
	if at := strings.LastIndexByte(name, '@'); at >= 0 {
		n, err := strconv.Atoi(name[at+1:])
		if err != nil {
			return nil, fmt.Errorf("workload spec %q: user count %q is not a number", spec, name[at+1:])
		}
		name, users = name[:at], n
	}
	return New(name, users)
}

var _ loadgen.Workload = (*SocialNetwork)(nil)
