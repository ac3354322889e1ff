package dataset

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// Cast is one cast member as a movie's information lists them.
type Cast struct {
	CastID     int32  `json:"cast_id"`
	Character  string `json:"character"`
	CastInfoID int64  `json:"cast_info_id"`
}

// MovieInfo is the body of /wrk2-api/movie-info/write, and what the page
// answers as movie_info.
type MovieInfo struct {
	MovieID      string   `json:"movie_id"`
	Title        string   `json:"title"`
	Casts        []Cast   `json:"casts"`
	PlotID       int64    `json:"plot_id"`
	ThumbnailIDs []string `json:"thumbnail_ids"`
	PhotoIDs     []string `json:"photo_ids"`
	VideoIDs     []string `json:"video_ids"`
	AvgRating    float64  `json:"avg_rating"`
	NumRating    int32    `json:"num_rating"`
}

// CastInfo is the body of /wrk2-api/cast-info/write, and one of the page's
// cast_infos. Gender is true for a man.
type CastInfo struct {
	CastInfoID int64  `json:"cast_info_id"`
	Name       string `json:"name"`
	Gender     bool   `json:"gender"`
	Intro      string `json:"intro"`
}

// Plot is the body of /wrk2-api/plot/write.
type Plot struct {
	PlotID int64  `json:"plot_id"`
	Plot   string `json:"plot"`
}

// Movie is everything the dataset holds about one distinct title.
type Movie struct {
	Title   string
	MovieID string
	Info    MovieInfo
	// CastInfos are in the order of Info.Casts.
	CastInfos []CastInfo
	Plot      Plot
}

// A movie has minCasts..maxCasts cast members; its cast info ids are
// castStride·k onwards, so maxCasts must not pass castStride.
const (
	minCasts   = 3
	maxCasts   = 6
	castStride = 10
)

// MovieIDFor is the movie id of the k-th distinct title (k from 1).
func MovieIDFor(k int) string { return fmt.Sprintf("tt%07d", k) }

var movies = sync.OnceValues(func() ([]Movie, map[string]int) {
	var out []Movie
	index := map[string]int{}
	for _, title := range Titles {
		if _, seen := index[title]; seen {
			continue
		}
		index[title] = len(out)
		out = append(out, newMovie(len(out)+1, title))
	}
	return out, index
})

// Movies are the distinct titles' movies, in order of first occurrence in
// Titles. The slices inside are shared: callers must not change them.
func Movies() []Movie {
	all, _ := movies()
	return slices.Clone(all)
}

// MovieID is title's movie id, if title is one of Titles.
func MovieID(title string) (string, bool) {
	all, index := movies()
	i, ok := index[title]
	if !ok {
		return "", false
	}
	return all[i].MovieID, true
}

// newMovie makes the k-th distinct title's movie from k alone.
func newMovie(k int, title string) Movie {
	h := hasher(k)
	m := Movie{Title: title, MovieID: MovieIDFor(k), Plot: Plot{PlotID: int64(k)}}
	casts := minCasts + h.intn("casts", maxCasts-minCasts+1)
	for j := range casts {
		ci := newCastInfo(int64(k*castStride+j), h.sub(j))
		m.CastInfos = append(m.CastInfos, ci)
		m.Info.Casts = append(m.Info.Casts, Cast{
			CastID:     int32(j + 1),
			Character:  character(h.sub(j)),
			CastInfoID: ci.CastInfoID,
		})
	}
	m.Plot.Plot = plot(title, m.Info.Casts[0].Character, m.Info.Casts[1].Character, h)
	m.Info.MovieID, m.Info.Title, m.Info.PlotID = m.MovieID, title, m.Plot.PlotID
	m.Info.ThumbnailIDs = []string{m.MovieID + "_thumbnail.jpg"}
	m.Info.PhotoIDs = mediaIDs(m.MovieID, "photo", ".jpg", 1+h.intn("photos", 4))
	m.Info.VideoIDs = mediaIDs(m.MovieID, "video", ".mp4", 1+h.intn("videos", 2))
	// Tenths from 1.0 to 9.9: exact in JSON both ways.
	m.Info.AvgRating = float64(10+h.intn("avg_rating", 90)) / 10
	m.Info.NumRating = int32(1 + h.intn("num_rating", 20000))
	return m
}

func mediaIDs(movieID, kind, ext string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = movieID + "_" + kind + "_" + strconv.Itoa(i+1) + ext
	}
	return ids
}

// hasher draws values for one movie (or one cast member of it) from a
// fixed function of its number and the value's name, so adding a field
// changes no other.
type hasher uint64

func (h hasher) sub(j int) hasher { return hasher(splitmix(uint64(h)*31 + uint64(j) + 1)) }

func (h hasher) intn(name string, n int) int {
	x := uint64(h)
	for i := 0; i < len(name); i++ {
		x = x*1099511628211 ^ uint64(name[i])
	}
	return int(splitmix(x) % uint64(n))
}

func (h hasher) pick(name string, from []string) string { return from[h.intn(name, len(from))] }

// splitmix is SplitMix64's finalizer: every input bit moves every output
// bit, so neighbouring movies look unrelated.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
