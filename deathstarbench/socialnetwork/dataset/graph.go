// Package dataset makes and loads the social graph that DeathStarBench
// benchmarks with. DeathStarBench ships socfb-Reed98 (a Facebook friendship
// graph of 962 users and 18,812 friendships); we cannot ship it, so
// Generate makes a seeded random graph of the same size whose degrees
// follow a similar heavy-tailed spread, and Load drives the front end as
// DeathStarBench's init_social_graph.py does.
package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Size of socfb-Reed98.
const (
	Reed98Users = 962
	Reed98Edges = 18812
	// DefaultSeed makes Generate's default graph the same everywhere.
	DefaultSeed = 1
)

// Degree spread: Facebook college graphs have a log-normal-like degree
// distribution; σ = 0.8 gives Reed98's spread (median ≈ 0.7 × mean, a long
// tail of a few hundred friends) with the mean set by the edge count.
const (
	degreeSigma       = 0.8
	maxDegreeOverMean = 8
)

// Graph is an undirected friendship graph over users 0..Users-1. A node's
// number is its user ID, as in DeathStarBench's datasets: socfb-Reed98's
// edge list numbers its 962 nodes from 0, and init_social_graph.py
// registers node k as user k (username_k) and follows along each edge by
// those names.
type Graph struct {
	Users int
	// Edges holds each friendship once, as [lower ID, higher ID], sorted.
	Edges [][2]int
}

// EdgesFor scales Reed98's edge count to users, capped at half of all
// possible pairs so small test graphs stay sparse.
func EdgesFor(users int) int {
	if users == Reed98Users {
		return Reed98Edges
	}
	edges := int(math.Round(float64(users) * Reed98Edges / Reed98Users))
	return min(edges, users*(users-1)/4)
}

// Generate returns a graph of users users and edges distinct friendships,
// the same for the same arguments. Every user has at least one friend, so
// every home timeline gets posts.
//
// It is a Chung–Lu graph: each user gets a log-normal weight, and edges
// join users chosen with probability proportional to weight.
func Generate(users, edges int, seed uint64) (Graph, error) {
	if users < 2 {
		return Graph{}, fmt.Errorf("a graph needs at least 2 users, got %d", users)
	}
	if edges < users/2 || edges > users*(users-1)/2 {
		return Graph{}, fmt.Errorf("%d edges cannot join %d users, each at least once, without repeats", edges, users)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed_d5b))
	mean := 2 * float64(edges) / float64(users)
	mu := math.Log(mean) - degreeSigma*degreeSigma/2
	cumulative := make([]float64, users)
	total := 0.0
	for i := range cumulative {
		weight := math.Exp(mu + degreeSigma*rng.NormFloat64())
		total += min(max(weight, 1), mean*maxDegreeOverMean)
		cumulative[i] = total
	}
	pick := func() int {
		return sort.SearchFloat64s(cumulative, rng.Float64()*total)
	}

	seen := make(map[[2]int]bool, edges)
	degree := make([]int, users)
	result := make([][2]int, 0, edges)
	add := func(a, b int) {
		if a == b || len(result) == edges {
			return
		}
		edge := [2]int{min(a, b), max(a, b)}
		if !seen[edge] {
			seen[edge] = true
			degree[a]++
			degree[b]++
			result = append(result, edge)
		}
	}
	// First one friend each (in a shuffled order, so the cap on edges does
	// not favour low IDs), then the weighted rest.
	for _, user := range rng.Perm(users) {
		for degree[user] == 0 {
			add(user, pick())
		}
	}
	// The loop ends: each try adds an edge with probability bounded away
	// from zero while edges ≤ half the pairs; the cap guards the rest.
	for tries := 0; len(result) < edges && tries < 1000*edges; tries++ {
		add(pick(), pick())
	}
	if len(result) < edges {
		return Graph{}, fmt.Errorf("could only place %d of %d edges", len(result), edges)
	}
	slices.SortFunc(result, func(x, y [2]int) int {
		if x[0] != y[0] {
			return x[0] - y[0]
		}
		return x[1] - y[1]
	})
	return Graph{Users: users, Edges: result}, nil
}

// Degrees returns each user's friend count, indexed by user ID.
func (g Graph) Degrees() []int {
	degrees := make([]int, g.Users)
	for _, edge := range g.Edges {
		degrees[edge[0]]++
		degrees[edge[1]]++
	}
	return degrees
}

// DegreeStats summarises the degree distribution.
type DegreeStats struct {
	Min, Median, Max int
	Mean             float64
}

// Stats returns the degree summary of g.
func (g Graph) Stats() DegreeStats {
	degrees := g.Degrees()
	slices.Sort(degrees)
	sum := 0
	for _, d := range degrees {
		sum += d
	}
	return DegreeStats{
		Min:    degrees[0],
		Median: degrees[len(degrees)/2],
		Max:    degrees[len(degrees)-1],
		Mean:   float64(sum) / float64(len(degrees)),
	}
}
