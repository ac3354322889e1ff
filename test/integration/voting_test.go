//go:build integration

package integration

import (
	"fmt"
	"math"
	"testing"

	"github.com/orchbench/orchbench/harness/results"
)

// Study 001's flow, short: 10 users spawned 5 a second, each casting a
// ballot, reading see-all and see-cities, then waiting 1-3 s, against the
// voting app in v1 (psycopg2, a connection per call: the study's mode),
// by Locust running experiments/study-001/locustfile.py and by our
// generator running the workload voting:study-001, each in its own Nomad
// batch job. Both steps must be valid with the flow's three requests in
// equal shares, every ballot accepted (no 400), and their throughputs,
// set by the same think time over the same population, within 15 %.
// Locust also runs one user: its last request comes up to 3 s before the
// end, and the window must still be the 20 s asked (marked by
// orchbench_window.py), not first to last request.
func TestStudy001FlowByLocustAndOurs(t *testing.T) {
	tag := envOr("ORCHBENCH_IT_IMAGE_TAG", "local")
	prefix := envOr("ORCHBENCH_IT_JOB_PREFIX", "it")
	spec := fmt.Sprintf(`sweep "study-001-flow" {
  study       = "001"
  seed        = 1
  repetitions = 1
  deploy      = "per-configuration"
  warmup      = "0s"
  duration    = "20s"
  orchestrators = ["nomad"]

  app_defaults {
    pack            = "voting"
    variants        = ["baseline"]
    vars            = { job_name = "%[1]s-voting", storage_mode = "v1", resource_scale = 0.5, parties = ["party1", "party2", "party3", "party4", "party5", "party6", "party7"] }
    generator_cores = 0.5
    timeout         = "10s"
    closed_loop {
      users      = 10
      spawn_rate = 5
    }
  }
  app "ours" {
    workload = "voting:study-001"
  }
  app "locust" {
    runner     = "locust"
    locustfile = "experiments/study-001/locustfile.py"
    closed_loop {
      users      = [1, 10]
      spawn_rate = 5
    }
  }
  slo {
    p99_ms          = 5000
    max_error_ratio = 0.01
  }
}
`, prefix)
	steps := sweepSteps(t, "study-001-flow", spec, "--vm", "", "--loadgen-image", "orchbench/orchbench:"+tag, "--load-job-prefix", prefix+"-load")
	if len(steps) != 3 {
		t.Fatalf("%d steps, want ours and Locust's at 10 users and Locust's at 1", len(steps))
	}
	by := map[string]results.StepResult{}
	for _, s := range steps {
		by[fmt.Sprintf("%s-%d", s.App, s.Users)] = s
		window := s.End.Sub(s.Start).Seconds()
		t.Logf("%s: %s %v by %v; %.2f rps, %d requests over %.3f s, mean %.1f ms, p99 %.1f ms, statuses %v", s.Step, s.Outcome, s.Reasons,
			s.Metadata["load_runner"], s.AchievedRPS, s.Requests, window, s.Corrected.Mean, s.Corrected.P99, s.StatusCodes)
		if s.Outcome != results.OutcomeValid {
			t.Errorf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
		}
		if window < 20 || window > 20.5 {
			t.Errorf("%s: window %.3f s, want the 20 s asked", s.Step, window)
		}
		if s.Users == 1 {
			// at least six flows of three requests: 20 s of pauses up to 3 s
			if n := s.Requests; n < 18 {
				t.Errorf("%s: %d requests by one user in 20 s of 1-3 s pauses", s.Step, n)
			}
			continue
		}
		counts := map[string]int64{}
		for _, e := range s.Endpoints {
			counts[e.Name] = e.Requests
		}
		vote, all, cities := counts["POST /voting/vote/"], counts["GET /voting/see-all/"], counts["GET /voting/see-cities/"]
		// a user stopped by the end of the window may be mid-flow
		if vote < 20 || all > vote || cities > all || vote-cities > 10 || len(counts) != 3 {
			t.Errorf("%s: endpoints %v, want the flow's three requests in equal shares (10 users mid-flow at most)", s.Step, counts)
		}
	}
	ours, locust := by["ours-10"], by["locust-10"]
	if n := ours.StatusCodes["400"]; n != 0 {
		t.Errorf("our generator's ballots were refused %d times: %v", n, ours.StatusCodes)
	}
	if r := locust.Metadata["load_runner"]; r != "nomad/locust" {
		t.Errorf("the locust step ran by %v", r)
	}
	ratio := ours.AchievedRPS / locust.AchievedRPS
	t.Logf("throughput ours/locust: %.3f", ratio)
	if math.IsNaN(ratio) || math.Abs(ratio-1) > 0.15 {
		t.Errorf("ours %.2f rps, Locust %.2f rps: the same flow and think time should agree within 15 %%", ours.AchievedRPS, locust.AchievedRPS)
	}
}
