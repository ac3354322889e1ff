package dataset

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTitlesLength(t *testing.T) {
	// The script draws math.random(1000); a missing or extra title would
	// shift every index after it.
	if len(Titles) != 1000 {
		t.Fatalf("len(Titles) = %d, want 1000", len(Titles))
	}
}

func TestTitlesKnownEntries(t *testing.T) {
	// Entries at both ends, at the page break of the source and with
	// non-ASCII bytes that a re-encoding would change.
	for i, want := range map[int]string{
		0:   "Avengers: Endgame",
		3:   "Pokémon Detective Pikachu",
		53:  "Fate/stay night: Heaven’s Feel II. lost butterfly",
		72:  "John Wick: Chapter 3 – Parabellum",
		101: "The Lion King 1½",
		249: "'71",
		706: "Get Rich or Die Tryin'",
		773: "WALL·E",
		999: "Flood",
	} {
		if Titles[i] != want {
			t.Errorf("Titles[%d] = %q, want %q", i, Titles[i], want)
		}
	}
}

func TestTitlesWellFormed(t *testing.T) {
	for i, title := range Titles {
		if title == "" || title != strings.TrimSpace(title) || !utf8.ValidString(title) {
			t.Errorf("Titles[%d] = %q: empty, padded or not UTF-8", i, title)
		}
	}
}

func TestTitlesDuplicates(t *testing.T) {
	first := map[string]int{}
	var got []string
	for i, title := range Titles {
		if j, seen := first[title]; seen {
			got = append(got, title)
			t.Logf("%q at %d and %d", title, j, i)
			continue
		}
		first[title] = i
	}
	slices.Sort(got)
	want := []string{"Aladdin", "Hellboy", "Invasion of the Body Snatchers", "My Sassy Girl", "The Hitcher"}
	if !slices.Equal(got, want) {
		t.Errorf("duplicated titles = %q, want %q", got, want)
	}
	if len(first) != 995 {
		t.Errorf("%d distinct titles, want 995", len(first))
	}
}
