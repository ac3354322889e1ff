package dataset_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/testutil"
)

func verify(t *testing.T, frontend string, opts dataset.VerifyOptions) (dataset.VerifyResult, []string, error) {
	t.Helper()
	var lines []string
	opts.Frontend = frontend
	opts.Progress = func(line string) { lines = append(lines, line) }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	result, err := dataset.Verify(ctx, opts)
	return result, lines, err
}

// loaded is a fake front end holding the dataset with users users.
func loaded(t *testing.T, users int) *fakeFrontend {
	t.Helper()
	f := newFake(t)
	if _, _, err := load(t, f.URL, dataset.LoadOptions{Users: users}); err != nil {
		t.Fatal(err)
	}
	f.resetCounts()
	return f
}

func TestVerifyPassesAfterALoadAndWritesNothing(t *testing.T) {
	f := loaded(t, dataset.DefaultUsers)
	before := f.state()
	result, lines, err := verify(t, f.URL, dataset.VerifyOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	want := []string{
		"ok    1000 users exist with their names (every one)",
		"ok    995 titles give their movie ids (every one)",
		"ok    995 movie pages hold the dataset's movie info, cast and plot (every one)",
		"ok    an unknown title answers 404 from /orchbench/movie-id",
		`ok    a compose without a title answers 400 "Incomplete arguments"`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") || len(result.Checks) != len(want) {
		t.Errorf("lines:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if f.state() != before {
		t.Error("verify changed what the front end holds")
	}
	if w := f.writes(); len(w) != 1 || w["POST /wrk2-api/review/compose"] != 1 {
		t.Errorf("verify sent %v, want the one compose without a title", w)
	}
	f.change(func(f *fakeFrontend) {
		if n := f.requests["GET /orchbench/page"]; n != 995 {
			t.Errorf("%d pages read, want 995", n)
		}
	})
}

func TestVerifySamples(t *testing.T) {
	f := loaded(t, 100)
	_, lines, err := verify(t, f.URL, dataset.VerifyOptions{Users: 100, SampledUsers: 10, SampledMovies: 20, Seed: 7})
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	for _, want := range []string{
		"ok    12 users exist with their names (the first, the last and 10 drawn with seed 7)",
		"ok    22 titles give their movie ids (the first, the last and 20 drawn with seed 8)",
	} {
		if !contains(lines, want) {
			t.Errorf("no line %q in\n%s", want, strings.Join(lines, "\n"))
		}
	}
	f.change(func(f *fakeFrontend) {
		if f.requests["GET /orchbench/user"] != 12 || f.requests["GET /orchbench/page"] != 22 {
			t.Errorf("requests %v: want 12 users and 22 pages read", f.requests)
		}
	})
}

func TestVerifyNamesWhatDiffers(t *testing.T) {
	movies := dataset.Movies()
	full := loaded(t, dataset.DefaultUsers)
	for _, c := range []struct {
		name   string
		change func(f *fakeFrontend)
		// The error must hold each of these.
		want []string
	}{
		{"a missing movie", func(f *fakeFrontend) {
			delete(f.titles, movies[41].Title)
			delete(f.infos, movies[41].MovieID)
		}, []string{"2 of 5 checks failed", `first: 995 titles give their movie ids (every one): "` + movies[41].Title + `" (tt0000042): want HTTP 200; got HTTP 404`}},
		{"a wrong plot", func(f *fakeFrontend) {
			f.plots[7] = "A different story."
		}, []string{"1 of 5 checks failed", `first: 995 movie pages hold the dataset's movie info, cast and plot (every one): "` + movies[6].Title + `" (tt0000007): plot: want "In `, `got "A different story."`}},
		{"a missing user", func(f *fakeFrontend) {
			delete(f.users, "username_17")
		}, []string{"1 of 5 checks failed", "first: 1000 users exist with their names (every one): username_17: want HTTP 200; got HTTP 404"}},
		{"a cast member missing from a page", func(f *fakeFrontend) {
			delete(f.casts, movies[0].CastInfos[2].CastInfoID)
		}, []string{"1 of 5 checks failed", `"Avengers: Endgame" (tt0000001): cast_infos: want 6 items, got 5: [`}},
		{"another character", func(f *fakeFrontend) {
			info := f.infos["tt0000003"]
			info.Casts = append([]dataset.Cast(nil), info.Casts...)
			info.Casts[1].Character = "Nobody"
			f.infos["tt0000003"] = info
		}, []string{"1 of 5 checks failed", `(tt0000003): movie_info.casts[1]: want {"cast_id":2,"character":"` + movies[2].Info.Casts[1].Character + `","cast_info_id":31}, got {"cast_id":2,"character":"Nobody","cast_info_id":31}`}},
		{"another rating", func(f *fakeFrontend) {
			info := f.infos["tt0000002"]
			info.AvgRating += 0.1
			f.infos["tt0000002"] = info
		}, []string{"1 of 5 checks failed", "(tt0000002): movie_info.avg_rating: want "}},
		{"a compose that writes", func(f *fakeFrontend) {
			f.fail = func(r *http.Request) (int, string) {
				if r.URL.Path == "/wrk2-api/review/compose" {
					return http.StatusOK, ""
				}
				return 0, ""
			}
		}, []string{"1 of 5 checks failed", `first: a compose without a title answers 400 "Incomplete arguments": want HTTP 400 "Incomplete arguments"; got HTTP 200`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.copyFrom(full)
			f.change(c.change)
			result, lines, err := verify(t, f.URL, dataset.VerifyOptions{})
			if err == nil {
				t.Fatalf("passed:\n%s", strings.Join(lines, "\n"))
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\nlacks %q", err, want)
				}
			}
			if len(lines) != len(result.Checks) || !contains(lines, "FAIL  ") {
				t.Errorf("want one line per check with the failures marked:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}

func TestVerifyOfNothingFailsEveryCheck(t *testing.T) {
	empty := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer empty.Close()
	_, _, err := verify(t, empty.URL, dataset.VerifyOptions{})
	if err == nil || !strings.Contains(err.Error(), `5 of 5 checks failed; first: 1000 users exist with their names (every one): username_1: not a JSON user: unexpected end of JSON input; got HTTP 200, body ""`) {
		t.Fatalf("an empty 200: err = %v", err)
	}
	_, _, err = verify(t, "http://"+testutil.FreeAddr(t), dataset.VerifyOptions{})
	if err == nil || !strings.Contains(err.Error(), "5 of 5 checks failed") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("nothing listening: err = %v", err)
	}
}

// A front end that answers too slowly fails each check at the request
// timeout, and the whole run ends with its context.
func TestVerifyIsBoundedInTime(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })

	started := time.Now()
	_, lines, err := verify(t, slow.URL, dataset.VerifyOptions{RequestTimeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "5 of 5 checks failed") || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("err = %v\n%s", err, strings.Join(lines, "\n"))
	}
	if elapsed := time.Since(started); elapsed > 5*time.Second {
		t.Errorf("5 checks at a 50 ms timeout took %s", elapsed)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	started = time.Now()
	result, err := dataset.Verify(ctx, dataset.VerifyOptions{Frontend: slow.URL, RequestTimeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "verification stopped after 0 checks") {
		t.Fatalf("err = %v, checks %+v", err, result.Checks)
	}
	if elapsed := time.Since(started); elapsed > 3*time.Second {
		t.Errorf("a 300 ms run took %s", elapsed)
	}
}
