package dataset

import (
	"reflect"
	"testing"
)

func TestGenerateReed98Size(t *testing.T) {
	g, err := Generate(Reed98Users, Reed98Edges, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if g.Users != Reed98Users || len(g.Edges) != Reed98Edges {
		t.Fatalf("got %d users, %d edges; want %d, %d", g.Users, len(g.Edges), Reed98Users, Reed98Edges)
	}
	seen := map[[2]int]bool{}
	for _, e := range g.Edges {
		if e[0] >= e[1] || e[0] < 0 || e[1] >= g.Users {
			t.Fatalf("edge %v is not [low, high] within 0..%d", e, g.Users-1)
		}
		if seen[e] {
			t.Fatalf("edge %v repeated", e)
		}
		seen[e] = true
	}
	// IDs are DeathStarBench's 0..N-1: the first and the last user have
	// friends like every other.
	if d := g.Degrees(); d[0] == 0 || d[g.Users-1] == 0 {
		t.Fatalf("user 0 has %d friends, user %d has %d; want both in the graph", d[0], g.Users-1, d[g.Users-1])
	}
	stats := g.Stats()
	t.Logf("degrees: %+v", stats)
	// Reed98: mean 39.1, median in the 30s, max 313, min 1.
	if stats.Min < 1 {
		t.Errorf("a user has no friend: %+v", stats)
	}
	if stats.Median < 22 || stats.Median > 38 {
		t.Errorf("median degree %d is far from Reed98's spread", stats.Median)
	}
	if stats.Max < 120 || stats.Max > 330 {
		t.Errorf("max degree %d is far from Reed98's long tail", stats.Max)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate(200, EdgesFor(200), 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(200, EdgesFor(200), 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different graphs")
	}
	c, _ := Generate(200, EdgesFor(200), 8)
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave the same graph")
	}
}

func TestGenerateSmallAndInvalid(t *testing.T) {
	g, err := Generate(10, EdgesFor(10), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Edges) != EdgesFor(10) || g.Stats().Min < 1 {
		t.Fatalf("small graph: %d edges, stats %+v", len(g.Edges), g.Stats())
	}
	if _, err := Generate(1, 0, 1); err == nil {
		t.Error("1 user: want an error")
	}
	if _, err := Generate(4, 7, 1); err == nil {
		t.Error("7 edges over 4 users: want an error")
	}
}
