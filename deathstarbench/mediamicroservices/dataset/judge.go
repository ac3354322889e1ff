package dataset

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
)

// The judges of Verify's reads: each returns what is wrong with an answer,
// or "" when nothing is.

func userIs(a answer, want User) string {
	if a.status != http.StatusOK {
		return "want HTTP 200"
	}
	var got struct {
		UserID    *int64 `json:"user_id"`
		Username  string `json:"username"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	}
	if err := json.Unmarshal([]byte(a.body), &got); err != nil {
		return "not a JSON user: " + err.Error()
	}
	switch {
	case got.UserID == nil:
		return "no user_id"
	case got.Username != want.Username || got.FirstName != want.FirstName || got.LastName != want.LastName:
		return fmt.Sprintf("want username %q, first name %q, last name %q; got %q, %q, %q",
			want.Username, want.FirstName, want.LastName, got.Username, got.FirstName, got.LastName)
	}
	return ""
}

func movieIDIs(a answer, want string) string {
	if a.status != http.StatusOK {
		return "want HTTP 200"
	}
	var got struct {
		MovieID *string `json:"movie_id"`
	}
	if err := json.Unmarshal([]byte(a.body), &got); err != nil || got.MovieID == nil {
		return `not a JSON {"movie_id": ...}`
	}
	if *got.MovieID != want {
		return fmt.Sprintf("want movie id %s, got %s", want, *got.MovieID)
	}
	return ""
}

// pageIs compares a page with the movie field by field, so that the
// failure says which field differs rather than that some byte does.
func pageIs(a answer, want Movie) string {
	if a.status != http.StatusOK {
		return "want HTTP 200"
	}
	var got struct {
		MovieInfo *MovieInfo `json:"movie_info"`
		CastInfos []CastInfo `json:"cast_infos"`
		Plot      *string    `json:"plot"`
	}
	if err := json.Unmarshal([]byte(a.body), &got); err != nil {
		return "not a JSON page: " + err.Error()
	}
	if got.MovieInfo == nil || got.Plot == nil {
		return "no movie_info or no plot"
	}
	info := *got.MovieInfo
	for _, f := range []struct {
		name      string
		want, got any
	}{
		{"movie_info.movie_id", want.Info.MovieID, info.MovieID},
		{"movie_info.title", want.Info.Title, info.Title},
		{"movie_info.casts", want.Info.Casts, info.Casts},
		{"movie_info.plot_id", want.Info.PlotID, info.PlotID},
		{"movie_info.thumbnail_ids", want.Info.ThumbnailIDs, info.ThumbnailIDs},
		{"movie_info.photo_ids", want.Info.PhotoIDs, info.PhotoIDs},
		{"movie_info.video_ids", want.Info.VideoIDs, info.VideoIDs},
		{"movie_info.avg_rating", want.Info.AvgRating, info.AvgRating},
		{"movie_info.num_rating", want.Info.NumRating, info.NumRating},
		{"cast_infos", want.CastInfos, got.CastInfos},
		{"plot", want.Plot.Plot, *got.Plot},
	} {
		if problem := differs(f.name, f.want, f.got); problem != "" {
			return problem
		}
	}
	return ""
}

// differs says how got differs from want: for lists, in length or at the
// first item that differs.
func differs(name string, want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	w, g := reflect.ValueOf(want), reflect.ValueOf(got)
	if w.Kind() != reflect.Slice {
		return fmt.Sprintf("%s: want %s, got %s", name, shown(want), shown(got))
	}
	if w.Len() != g.Len() {
		return fmt.Sprintf("%s: want %d items, got %d: %s", name, w.Len(), g.Len(), shown(got))
	}
	for i := range w.Len() {
		if problem := differs(fmt.Sprintf("%s[%d]", name, i), w.Index(i).Interface(), g.Index(i).Interface()); problem != "" {
			return problem
		}
	}
	return ""
}

// shown writes a value as JSON, cut to 200 bytes like the answers are.
func shown(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(data) > 200 {
		return string(data[:200]) + "..."
	}
	return string(data)
}
