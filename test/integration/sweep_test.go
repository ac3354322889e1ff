//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// A sweep with three configurations of Taewa: one healthy, one whose CPU
// limit is declared with a wrong MHz-per-core (the limits gate must refuse
// it), one whose probe gets an empty answer (the probe gate must refuse it).
const itSpec = `
sweep "it" {
  seed          = 7
  repetitions   = 2
  deploy        = "per-configuration"
  warmup        = "1s"
  duration      = "3s"
  cooldown      = "0s"
  early_stop    = false
  orchestrators = ["nomad"]

  app "taewa" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { resource_scale = 0.25 }
    rates       = [50, 100]
    threads     = 1
    connections = 4
  }
  app "badlimits" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { resource_scale = 0.25, mhz_per_core = 1000, job_name = "taewa-badlimits" }
    rates       = [50]
    threads     = 1
    connections = 4
  }
  app "emptyprobe" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { resource_scale = 0.25, job_name = "taewa-emptyprobe" }
    rates       = [50]
    threads     = 1
    connections = 4
    # stands for a dataset that never loaded: the answer is shorter than the probe demands
    probe {
      path      = "/?n=1"
      min_bytes = 4096
    }
  }
  slo {
    p99_ms             = 2000
    min_achieved_ratio = 0.9
    max_error_ratio    = 0.05
  }
}
`

// TestSweepResumeGatesAndPush runs a sweep through Nomad batch load jobs,
// kills the harness after its first archived step, resumes with
// VictoriaMetrics stopped, then pushes the archive and checks that every step
// is in the archive and in VictoriaMetrics exactly once, that the gates
// refused the broken configurations, and that the dashboards have data.
func TestSweepResumeGatesAndPush(t *testing.T) {
	work := t.TempDir()
	spec := filepath.Join(work, "it.hcl")
	if err := os.WriteFile(spec, []byte(itSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	resultsDir := filepath.Join(work, "results")
	archive := results.Archive{Dir: resultsDir}
	common := []string{"--dir", resultsDir, "--reports", filepath.Join(work, "reports")}

	// 1. start the sweep, kill it hard once the first step is archived
	start := time.Now()
	cmd := exec.Command(orchbench, append([]string{"sweep", "-f", spec}, common...)...)
	cmd.Dir = root
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var sweepID string
	eventually(t, 3*time.Minute, "the first step is archived", func() error {
		m := regexp.MustCompile(`sweep (it-\S+):`).FindStringSubmatch(out.String())
		if m == nil {
			return fmt.Errorf("no sweep ID yet; output:\n%s", out.String())
		}
		sweepID = m[1]
		done, err := archive.CompletedSteps(sweepID)
		if err == nil && len(done) == 0 {
			err = fmt.Errorf("no completed step yet; output:\n%s", out.String())
		}
		return err
	})
	firstResult := time.Since(start)
	t.Logf("first step archived %.1f s after the sweep started", firstResult.Seconds())
	if firstResult > 90*time.Second {
		t.Errorf("first result took %s", firstResult)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	t.Logf("killed the sweep; its output so far:\n%s", out.String())
	before, _ := archive.CompletedSteps(sweepID)

	// 2. resume with VictoriaMetrics stopped: nothing may be lost
	must(t, root+"/.tools/bin/nomad", "job", "stop", "-detach", "victoriametrics")
	eventually(t, time.Minute, "VictoriaMetrics stops answering", func() error {
		if _, err := vmSeries("up"); err == nil {
			return fmt.Errorf("still answering")
		}
		return nil
	})
	settled, rerun := 0, 0
	for id := range before {
		if s, err := archive.LoadStep(sweepID, id); err == nil && s.Outcome == results.OutcomeInvalid {
			rerun++
		} else {
			settled++
		}
	}
	resumed := must(t, orchbench, append([]string{"sweep", "--resume", sweepID}, common...)...)
	if !strings.Contains(resumed, fmt.Sprintf("%d of 8 steps settled in the archive; %d invalid ones run again", settled, rerun)) {
		t.Errorf("resume did not report the %d settled and %d invalid archived steps", settled, rerun)
	}
	if !strings.Contains(resumed, "were not pushed to VictoriaMetrics") {
		t.Errorf("resume with VictoriaMetrics down should say which steps were not pushed")
	}

	rec, err := archive.LoadSweep(sweepID)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := archive.LoadSteps(sweepID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(rec.Plan) || len(rec.Plan) != 8 {
		t.Fatalf("archive has %d steps, plan %d, want 8 each", len(steps), len(rec.Plan))
	}
	seen := map[string]int{}
	for _, s := range steps {
		seen[s.Step]++
		gates := map[string]results.Gate{}
		for _, g := range s.Gates {
			gates[g.Name] = g
		}
		switch s.App {
		case "taewa":
			if s.Outcome != results.OutcomeValid || s.Requests == 0 || s.AchievedRPS < 0.8*s.OfferedRPS {
				t.Errorf("%s: want a valid measurement near %g rps, got %s achieved=%.1f reasons=%v", s.Step, s.OfferedRPS, s.Outcome, s.AchievedRPS, s.Reasons)
			}
			if s.Accounting == nil || !s.Accounting.Balanced() {
				t.Errorf("%s: requests unaccounted for: %+v", s.Step, s.Accounting)
			}
			for _, name := range []string{"healthy", "limits", "probe", "load", "load-path", "generator", "responses", "slo"} {
				if !gates[name].Passed {
					t.Errorf("%s: gate %s did not pass: %s", s.Step, name, gates[name].Detail)
				}
			}
			if s.Metadata["load_runner"] != "nomad" {
				t.Errorf("%s: load ran on %v, want the Nomad batch job", s.Step, s.Metadata["load_runner"])
			}
		case "badlimits":
			if s.Outcome != results.OutcomeInvalid || gates["limits"].Passed || !strings.Contains(gates["limits"].Detail, "the variant declares 0.250") {
				t.Errorf("%s: the limits gate should refuse a wrong CPU quota: %s %+v", s.Step, s.Outcome, gates["limits"])
			}
		case "emptyprobe":
			if s.Outcome != results.OutcomeInvalid || gates["probe"].Passed || !strings.Contains(gates["probe"].Detail, "want at least 4096") {
				t.Errorf("%s: the probe gate should refuse a short answer: %s %+v", s.Step, s.Outcome, gates["probe"])
			}
		}
	}
	for _, st := range rec.Plan {
		if seen[st.ID] != 1 {
			t.Errorf("step %s is in the archive %d times", st.ID, seen[st.ID])
		}
	}
	show := must(t, orchbench, "results", "show", "--dir", resultsDir, sweepID)
	if !strings.Contains(show, "invalid steps (excluded from statistics; `orchbench sweep --resume "+sweepID+"` runs them again)") {
		t.Errorf("results show does not list the invalid steps")
	}

	// 3. VictoriaMetrics back: push restores every step; a second push adds nothing
	must(t, root+"/cluster/embedded.sh", "up")
	for i := 0; i < 2; i++ {
		must(t, orchbench, "results", "push", "--dir", resultsDir, sweepID)
	}
	q := fmt.Sprintf(`count_over_time(orchbench_step_valid{sweep=%q}[1h])`, sweepID)
	// an invalid step run again by --resume has an earlier attempt, which
	// the archive keeps and push sends too
	attempts := map[string]float64{}
	for _, st := range rec.Plan {
		earlier, err := archive.EarlierAttempts(sweepID, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		attempts[st.ID] = float64(1 + len(earlier))
	}
	eventually(t, time.Minute, "every attempt of every step in VictoriaMetrics exactly once", func() error {
		vals, err := vmValues(q)
		if err != nil {
			return err
		}
		if len(vals) != 8 {
			return fmt.Errorf("%d step series, want 8", len(vals))
		}
		for step, v := range vals {
			if v != attempts[step] {
				return fmt.Errorf("step %s has %g samples, want %g (its attempts)", step, v, attempts[step])
			}
		}
		return nil
	})

	// 4. the sweep dashboard renders the pushed series
	// the last 10 minutes: this test's own jobs, not every earlier test's
	// (vmui draws at most 20 series a graph)
	dom := chromiumDOM(t, "http://127.0.0.1:8428/vmui/#/dashboards?g0.range_input=10m")
	if n := strings.Count(dom, "vm-graph-view"); n < 8 {
		t.Errorf("sweep dashboard shows %d graphs, want 8", n)
	}
	// the per-second panels at the top list the measured steps in their legends
	shown := 0
	for _, st := range rec.Plan {
		if st.App == "taewa" && strings.Contains(dom, st.ID) {
			shown++
		}
	}
	if shown == 0 {
		t.Errorf("the dashboard legends show none of the sweep's measured steps")
	}
	t.Logf("dashboard: %d graphs, %d of 4 measured steps in the legends", strings.Count(dom, "vm-graph-view"), shown)
	// beside them, the log panel: lines each job wrote, shipped by the node
	// agent (a job name appears in no other panel's legend)
	if !strings.Contains(dom, "Log lines shipped per second, by job") {
		t.Error("the sweep dashboard has no log panel")
	} else if !strings.Contains(dom, "taewa-badlimits") && !strings.Contains(dom, "taewa-emptyprobe") {
		t.Error("the dashboard's log panel shows none of the sweep's jobs")
	}
	if !strings.Contains(dom, "Node CPU by state (cores)") {
		t.Error("the sweep dashboard has no node panel")
	}
}

// vmValues runs an instant query and maps each series' step label to its value.
func vmValues(query string) (map[string]float64, error) {
	b, err := exec.Command("curl", "-sf", "--get", "--data-urlencode", "query="+query, "http://127.0.0.1:8428/api/v1/query").Output()
	if err != nil {
		return nil, err
	}
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		var v float64
		fmt.Sscan(fmt.Sprint(s.Value[1]), &v)
		out[s.Metric["step"]] = v
	}
	return out, nil
}

// syncBuffer collects a child's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
