//go:build integration

package integration

import (
	"fmt"
	"os"
	"testing"

	"github.com/orchbench/orchbench/harness/results"
)

// Study 000's load on Nomad, by our closed loop and by Fortio itself (and
// Locust, which must give a valid step too): the
// same Taewa pack and limits, 8 connections at max rate, 8 s, our
// generator and Fortio capped at 0.25 core in their own batch jobs: every
// step must be valid, archive rps per core the service used, and the medians of the two
// throughputs over 3 repetitions must agree within a factor 1.5. Each
// runner's steps share one deployment (per-step deployments spread the
// machine's drift over both runners, at 6 more deployments, about 80 s of
// CI, for a test whose bound is a factor); on a shared 2-core machine one
// runner's own repetitions spread
// by up to 70 % (ours 1703-2953 rps, fortio 2508-3128 in one run), so the 5 % parity is
// asserted by sweep's TestClosedLoopMatchesFortio, which runs both side by
// side on one pinned CPU, where drift cannot tell them apart.
// ORCHBENCH_IT_IMAGE_TAG picks the orchbench, fortio and locust images (default local); ORCHBENCH_IT_JOB_PREFIX the job names (default it).
func TestFortioRunnerMatchesOurClosedLoop(t *testing.T) {
	tag := envOr("ORCHBENCH_IT_IMAGE_TAG", "local")
	prefix := envOr("ORCHBENCH_IT_JOB_PREFIX", "it")
	// The SLO is loose on purpose: this test guards the runners' plumbing,
	// and Locust's saturated service once read p99 500.2 ms against a
	// 500 ms SLO, a broken step from the machine's noise, not a fault.
	// Locust (one Python thread) spends its whole 0.25 core before Taewa
	// spends its own at difficulty 1000: the generator gate rightly called
	// those steps invalid (locust used 91-97 % of 0.25 core, the service
	// 74-87 % of its quota). So Locust gets its own one core and a
	// difficulty at which the service is what saturates.
	app := func(name, runner string, difficulty int, generatorCores float64) string {
		return fmt.Sprintf(`
  app %q {
    pack     = "taewa"
    variants = ["baseline"]
    vars     = { job_name = "%s-%s", resource_scale = 0.25, difficulty = %d }
    runner          = %q
    generator_cores = %g
    closed_loop {
      users = 8
    }
  }`, name, prefix, name, difficulty, runner, generatorCores)
	}
	spec := `sweep "loadtools" {
  seed        = 1
  repetitions = 3
  deploy      = "per-configuration"
  warmup      = "2s"
  duration    = "8s"
  orchestrators = ["nomad"]` + app("ours", "orchbench", 1000, 0.25) + app("fortio", "fortio", 1000, 0.25) + app("locust", "locust", 80000, 1) + `
  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
`
	// One pass more for invalid steps: on CI, with Taewa throttled in every
	// CFS period beside it, our generator once held its users back 15.8 %
	// of their cycle (the generator gate, rightly); the test wants every
	// runner's step valid, not a quiet machine.
	steps := sweepSteps(t, "loadtools", spec, "--vm", "", "--loadgen-image", "orchbench/orchbench:"+tag, "--load-job-prefix", prefix+"-load", "--retry-invalid", "1")
	by := map[string]results.StepResult{}
	rps := map[string][]float64{}
	for _, s := range steps {
		by[s.App] = s
		rps[s.App] = append(rps[s.App], s.AchievedRPS)
		t.Logf("%s: %s; %s by %v; %.1f rps, p50 %.2f ms, p99 %.2f ms, %.0f rps per core used (%.3f cores)", s.Step, s.Outcome, s.Reasons,
			s.Metadata["load_runner"], s.AchievedRPS, s.Corrected.P50, s.Corrected.P99, s.QPSPerCore, s.ServiceCores)
	}
	fortio, locust := by["fortio"], by["locust"]
	for _, s := range steps {
		if s.Outcome != results.OutcomeValid {
			t.Fatalf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
		}
		if s.QPSPerCore <= 0 || s.ServiceCores <= 0 {
			t.Errorf("%s: no rps per core used (%g over %g cores)", s.Step, s.QPSPerCore, s.ServiceCores)
		}
	}
	if r := fortio.Metadata["load_runner"]; r != "nomad/fortio" {
		t.Errorf("fortio step ran by %v", r)
	}
	if r := locust.Metadata["load_runner"]; r != "nomad/locust" {
		t.Errorf("locust step ran by %v", r)
	}
	// Locust (Python) is not held to the others' throughput: it is a
	// different client, and study 001 used it far below saturation.
	mo, mf := results.MedianCI(rps["ours"]).Median, results.MedianCI(rps["fortio"]).Median
	ratio := mo / mf
	t.Logf("median over 3: orchbench %.1f rps %v, fortio %.1f rps %v: ratio %.3f", mo, rps["ours"], mf, rps["fortio"], ratio)
	// The 5 % agreement is TestClosedLoopMatchesFortio's, where both run at
	// once on one pinned core. Here, one after the other on a shared
	// 2-core node, repetitions of one runner spread from 1700 to 2950 rps,
	// and medians over 3 were seen at ratios 0.77 to 1.09; what this test
	// guards is the plumbing (units, counts, the parsed window), whose
	// mistakes are factors, not percents.
	if ratio < 0.67 || ratio > 1.5 {
		t.Fatalf("throughputs differ by more than a factor 1.5: ours %.1f, fortio %.1f rps", mo, mf)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
