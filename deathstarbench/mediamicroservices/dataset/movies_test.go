package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

func TestMovies(t *testing.T) {
	movies := Movies()
	if len(movies) != 995 {
		t.Fatalf("%d movies, want one per distinct title: 995", len(movies))
	}
	if movies[0].Title != Titles[0] || movies[0].MovieID != "tt0000001" || movies[994].MovieID != "tt0000995" {
		t.Errorf("first %q %s, last %s", movies[0].Title, movies[0].MovieID, movies[994].MovieID)
	}
	castIDs := map[int64]string{}
	for k, m := range movies {
		if id, ok := MovieID(m.Title); !ok || id != m.MovieID || m.MovieID != MovieIDFor(k+1) {
			t.Errorf("MovieID(%q) = %s, %v; want %s", m.Title, id, ok, m.MovieID)
		}
		if m.Info.MovieID != m.MovieID || m.Info.Title != m.Title || m.Info.PlotID != m.Plot.PlotID || m.Plot.PlotID != int64(k+1) {
			t.Errorf("%s: info %+v does not name the movie and its plot %d", m.MovieID, m.Info, m.Plot.PlotID)
		}
		if n := len(m.CastInfos); n < minCasts || n > maxCasts || n != len(m.Info.Casts) {
			t.Errorf("%s: %d cast infos for %d casts", m.MovieID, n, len(m.Info.Casts))
		}
		for j, c := range m.Info.Casts {
			if c.CastInfoID != m.CastInfos[j].CastInfoID || c.Character == "" || m.CastInfos[j].Name == "" || m.CastInfos[j].Intro == "" {
				t.Errorf("%s: cast %d %+v against %+v", m.MovieID, j, c, m.CastInfos[j])
			}
			if other, dup := castIDs[c.CastInfoID]; dup {
				t.Errorf("cast info id %d in %s and %s", c.CastInfoID, other, m.MovieID)
			}
			castIDs[c.CastInfoID] = m.MovieID
		}
		if m.Plot.Plot == "" || len(m.Info.ThumbnailIDs) == 0 || len(m.Info.PhotoIDs) == 0 || len(m.Info.VideoIDs) == 0 ||
			m.Info.AvgRating < 1 || m.Info.AvgRating > 9.9 || m.Info.NumRating < 1 {
			t.Errorf("%s: %+v, plot %q", m.MovieID, m.Info, m.Plot.Plot)
		}
	}
	// The second occurrence of a title is the same movie.
	if id, _ := MovieID("Hellboy"); id != "tt0000005" {
		t.Errorf("Hellboy is %s", id)
	}
	if _, ok := MovieID("no such title"); ok {
		t.Error("an unknown title has a movie id")
	}
}

// TestMoviesArePinned fails when the dataset changes: a deployment loaded
// before the change would then fail verify, so a change must be meant.
func TestMoviesArePinned(t *testing.T) {
	data, err := json.Marshal(Movies())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	const want = "6b00d4d4b12efe30a62d7857fdc71e92787ad9af8166fb899f34afea7c2da5db"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("the dataset's SHA-256 is %s, pinned %s", got, want)
	}
	m := Movies()[0]
	if m.CastInfos[0].Name != "Caleb Castillo" || m.Info.Casts[0].Character != "Irene Sato" || m.Info.AvgRating != 1.2 || m.Info.NumRating != 3969 {
		t.Errorf("first movie: %+v %+v", m.Info, m.CastInfos[0])
	}
}

func TestUserN(t *testing.T) {
	if u := UserN(17); u != (User{"username_17", "password_17", "first_name_17", "last_name_17"}) {
		t.Errorf("UserN(17) = %+v", u)
	}
}
