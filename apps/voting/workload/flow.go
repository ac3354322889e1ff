// Package workload is study 001's load as a Go workload of orchbench's
// generator: each user casts a ballot, reads the totals and the cities,
// then waits 1 to 3 s, as the study's Locust users did. The same flow for
// Locust itself is experiments/study-001/locustfile.py.
package workload

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// The study's ballot rules (apps/voting/voting/validation.py): cities 1 to
// 81, a box's total at most 400.
const (
	cities      = 81
	maxBoxTotal = 400
	// DefaultParties is party1..party7: the study's users voted for seven
	// parties (its app knew six and skipped the seventh; ours refuses the
	// ballot, so the experiment deploys seven).
	DefaultParties = 7
)

// The pause after a user's three requests, uniform, as the study's
// wait_time.
const (
	PauseMin = time.Second
	PauseMax = 3 * time.Second
)

// Labels of the flow's requests, as Locust names them in its report.
const (
	LabelVote      = "POST /voting/vote/"
	LabelSeeAll    = "GET /voting/see-all/"
	LabelSeeCities = "GET /voting/see-cities/"
)

// Study001 is the flow. Users share the city counter, so consecutive
// ballots go to consecutive cities (1..81, then 1 again), as the study's
// users shared theirs; every ballot goes to box 1 of an election of size
// 1, as the study's committed locustfile sent them.
type Study001 struct {
	Parties int
	city    atomic.Int64
}

// FromSpec reads "voting:study-001" or "voting:study-001,parties=N".
func FromSpec(spec string) (*Study001, error) {
	_, args, _ := strings.Cut(spec, ":")
	flow, opts, _ := strings.Cut(args, ",")
	if flow != "study-001" {
		return nil, fmt.Errorf("unknown voting flow %q; the flow is study-001 (voting:study-001 or voting:study-001,parties=N)", flow)
	}
	w := &Study001{Parties: DefaultParties}
	if opts != "" {
		v, ok := strings.CutPrefix(opts, "parties=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 1 || n > maxBoxTotal {
			return nil, fmt.Errorf("voting:study-001: bad option %q; the one option is parties=N (1 to %d), the pack's parties count", opts, maxBoxTotal)
		}
		w.Parties = n
	}
	return w, nil
}

// Next serves a connection that keeps no user of its own (never, from
// orchbench's generator, which calls NewUser): a ballot.
func (w *Study001) Next(rng *rand.Rand) loadgen.Request { return w.vote(rng) }

// NewUser starts a user at the beginning of the flow.
func (w *Study001) NewUser(int) loadgen.User { return &user{w: w} }

type user struct {
	w    *Study001
	step int // the request Next gives next: 0 vote, 1 see-all, 2 see-cities
}

func (u *user) Next(rng *rand.Rand) loadgen.Request {
	step := u.step
	u.step = (u.step + 1) % 3
	switch step {
	case 0:
		return u.w.vote(rng)
	case 1:
		return loadgen.Request{Method: "GET", Path: "/voting/see-all/", Label: LabelSeeAll}
	default:
		return loadgen.Request{Method: "GET", Path: "/voting/see-cities/", Label: LabelSeeCities}
	}
}

// Pause is the wait after the flow's last request (Next has wrapped to the
// ballot again), none between its requests.
func (u *user) Pause(rng *rand.Rand) time.Duration {
	if u.step != 0 {
		return 0
	}
	return PauseMin + time.Duration(rng.Int64N(int64(PauseMax-PauseMin)+1))
}

// ballot is the vote route's JSON body.
type ballot struct {
	CityNo       int            `json:"city_no"`
	BoxNo        int            `json:"box_no"`
	ElectionSize int            `json:"election_size"`
	Votes        map[string]int `json:"votes"`
}

// vote casts a ballot: a total drawn from 1..400 split at random over the
// parties, so every ballot is one the rules accept.
func (w *Study001) vote(rng *rand.Rand) loadgen.Request {
	b := ballot{CityNo: int((w.city.Add(1)-1)%cities) + 1, BoxNo: 1, ElectionSize: 1, Votes: make(map[string]int, w.Parties)}
	left := 1 + rng.IntN(maxBoxTotal)
	for i := 1; i <= w.Parties; i++ {
		n := left
		if i < w.Parties {
			n = rng.IntN(left + 1)
		}
		b.Votes["party"+strconv.Itoa(i)] = n
		left -= n
	}
	body, err := json.Marshal(b)
	if err != nil {
		panic(err) // a struct of ints and a map of ints always encodes
	}
	return loadgen.Request{Method: "POST", Path: "/voting/vote/", Label: LabelVote,
		Headers: []loadgen.Header{{Name: "Content-Type", Value: "application/json"}}, Body: body}
}
