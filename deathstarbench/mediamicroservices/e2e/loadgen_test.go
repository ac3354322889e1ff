//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/testutil"
)

// scriptTitles are the titles harness/loadgen/testdata/media-compose.lua
// draws from.
var scriptTitles = []string{
	"Avengers: Endgame",
	"Pokémon Detective Pikachu",
	"The Lion King 1½",
	"Harry Potter and the Philosopher's Stone",
	"Miss & Mrs. Cops",
	"Fate/stay night: Heaven’s Feel II. lost butterfly",
	"WALL·E",
	"Flood",
}

// testLoadgen runs DeathStarBench's load shape: harness/loadgen with a
// script of compose-review.lua's shape at the target URL its README gives
// wrk2 (the compose route, which the script appends again), 50 requests/s
// for 5 s. Every request must answer 2xx, and each one's review be stored:
// in review storage, in its movie's list, and in its movie's tally. The
// dataset still verifies afterwards.
func testLoadgen(t *testing.T, s *stack) {
	movieIDs := make([]string, len(scriptTitles))
	for i, title := range scriptTitles {
		id, ok := dataset.MovieID(title)
		if !ok {
			t.Fatalf("the script's title %q is not in the dataset", title)
		}
		movieIDs[i] = id
	}
	count := func() (stored, listed, rated int) {
		t.Helper()
		for _, id := range movieIDs {
			listed += len(movieReviews(s, id))
			rated += int(rating(s, id).Count)
		}
		return len(storedReviewIDs(t, s)), listed, rated
	}
	storedBefore, listedBefore, ratedBefore := count()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Config{
		URL: s.frontend + "/wrk2-api/review/compose", Threads: 1, Connections: 4, Rate: 50, Duration: 5 * time.Second,
		Timeout:    10 * time.Second,
		ScriptPath: filepath.Join(testutil.RepoRoot(t), "harness", "loadgen", "testdata", "media-compose.lua"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var ok int64
	for code, n := range res.StatusCodes {
		if code/100 == 2 {
			ok += n
		} else {
			t.Errorf("%d answers of status %d", n, code)
		}
	}
	t.Logf("media-compose.lua: %d requests, status codes %v, latency mean %.1f ms, max %.1f ms", res.Requests, res.StatusCodes,
		res.Latency.Mean/1000, float64(res.Latency.Max)/1000)
	if res.Requests < 225 || ok != res.Requests || res.Errors.Total() != 0 {
		t.Errorf("%d requests (want about 250), %d answered 2xx, errors %+v", res.Requests, ok, res.Errors)
	}

	stored, listed, rated := count()
	for what, grew := range map[string]int{
		"review storage":             stored - storedBefore,
		"the script's movie lists":   listed - listedBefore,
		"the script's movie tallies": rated - ratedBefore,
	} {
		if int64(grew) != ok {
			t.Errorf("%s grew by %d reviews, want the %d composes answered 2xx", what, grew, ok)
		}
	}

	// The pages hold reviews now; the verifier, which a pack runs after
	// workloads too, reads past them.
	vctx, vcancel := context.WithTimeout(context.Background(), time.Minute)
	defer vcancel()
	if _, err := dataset.Verify(vctx, dataset.VerifyOptions{Frontend: s.frontend, SampledUsers: 100, SampledMovies: 100}); err != nil {
		t.Errorf("dataset.Verify after the composes: %v", err)
	}
}
