//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// autoscaleSpec is one short scaling step of Taewa on Nomad: 10 s at 60
// requests a second on one quarter-core instance, then 50 s at 600, more
// than one instance serves, with a policy that evaluates every 5 s.
func autoscaleSpec(name, job string) string { return autoscaleSpecOn(name, job, "nomad") }

func autoscaleSpecOn(name, job, orchestrator string) string {
	return fmt.Sprintf(`sweep %q {
  seed          = 29
  repetitions   = 1
  deploy        = "per-step"
  duration      = "60s"
  orchestrators = [%q]
  app "taewa" {
    pack        = "taewa"
    variants    = ["baseline"]
    vars        = { job_name = %q, resource_scale = 0.25 }
    rates       = [600]
    connections = 64
    phases {
      phase {
        duration = "10s"
        rate     = 0.1
      }
      phase {
        duration = "50s"
        rate     = 1
      }
    }
    autoscale {
      min        = 1
      max        = 3
      target_cpu = 0.7
      cooldown   = "10s"
      evaluation = "5s"
      settle     = "45s"
    }
  }
  slo {
    p99_ms             = 250
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
`, name, orchestrator, job)
}

// The Nomad Autoscaler, deployed by cluster-up, scales Taewa out under a
// step of load, and the step records it: the autoscaler's own scale-out,
// the new instances running and serving, the metric's samples, and the
// report's chart of instances and p99.
func TestAutoscalerScalesOutOnNomad(t *testing.T) {
	job := envOr("ORCHBENCH_IT_JOB_PREFIX", "it") + "-autoscale"
	work := t.TempDir()
	steps := sweepSteps(t, "autoscale-it", autoscaleSpec("autoscale-it", job), "--vm", "", "--reports", filepath.Join(work, "reports"))
	if len(steps) != 1 {
		t.Fatalf("%d steps, want 1", len(steps))
	}
	s := steps[0]
	t.Logf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
	for _, g := range s.Gates {
		t.Logf("  %s passed=%v: %s", g.Name, g.Passed, g.Detail)
	}
	if s.Outcome == results.OutcomeInvalid {
		t.Fatalf("the scaling step is invalid: %v", s.Reasons)
	}
	rec := s.Scaling
	if rec == nil {
		t.Fatal("no scaling record")
	}
	if rec.Metric.Count == 0 || !strings.Contains(rec.Metric.Query, "orchbench_task_cpu_seconds_total") {
		t.Errorf("metric %+v: want samples of the node probe's CPU series", rec.Metric)
	}
	var out *results.ScalingEvent
	for i, e := range rec.Events {
		t.Logf("  event at %.1f s: %d -> %d by %s (%s), running after %s, serving after %s", e.T, e.From, e.To, e.By, e.Reason, seconds(e.RunningSeconds), seconds(e.ServingSeconds))
		if e.To > e.From && e.By == orchestrator.ScaledByAutoscaler && out == nil {
			out = &rec.Events[i]
		}
	}
	if out == nil || out.ServingSeconds == nil {
		t.Fatalf("no scale-out by the autoscaler whose instances served: %+v", rec.Events)
	}
	if rec.StartCount != 1 || rec.PeakCount < 2 || rec.ScaleOutSeconds == nil {
		t.Errorf("instances serving: %d at the start, %d at most, scaled out after %v; want 1, at least 2, a time", rec.StartCount, rec.PeakCount, rec.ScaleOutSeconds)
	}
	// the load reached the instances the autoscaler added: each served
	// through the entry, whose connections the load-path gate accounts for
	page, err := os.ReadFile(filepath.Join(work, "reports", s.Sweep, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(work, "reports", s.Sweep, "scaling.svg"))
	if err != nil || !strings.Contains(string(page), `id="scaling"`) || !strings.Contains(string(svg), "instances serving") {
		t.Fatalf("the report has no autoscaling table and chart (%v)", err)
	}
}

// On Swarm, which has no autoscaler, orchbench's own runs the same policy
// from the same metric: it scales the service out, its events are its own,
// and the added tasks serve through the entry (the service's DNS name).
func TestOurScalerScalesOutOnSwarm(t *testing.T) {
	rec := measuredScalingStep(t, "autoscale-swarm", "swarm")
	if !strings.Contains(rec.Scaler, "orchbench swarm scaler") || !strings.Contains(rec.Metric.Query, `swarm_service=`) || rec.Metric.Count == 0 {
		t.Errorf("scaler %q, metric %+v: want orchbench's scaler on the Swarm tasks' CPU series", rec.Scaler, rec.Metric)
	}
	if rec.StartCount != 1 || rec.PeakCount < 2 || rec.ScaleOutSeconds == nil || len(rec.Events) == 0 {
		t.Errorf("instances serving: %d at the start, %d at most, scaled out after %s, events %+v", rec.StartCount, rec.PeakCount, seconds(rec.ScaleOutSeconds), rec.Events)
	}
}

// measuredScalingStep runs autoscaleSpecOn's one step on the orchestrator
// (its job named after the sweep) and returns its scaling record; an
// invalid or unrecorded step fails the test.
func measuredScalingStep(t *testing.T, name, orchestrator string) *results.ScalingRecord {
	t.Helper()
	job := envOr("ORCHBENCH_IT_JOB_PREFIX", "it") + "-" + name
	steps := sweepSteps(t, name, autoscaleSpecOn(name, job, orchestrator), "--vm", "")
	if len(steps) != 1 {
		t.Fatalf("%d steps, want 1", len(steps))
	}
	s := steps[0]
	t.Logf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
	for _, g := range s.Gates {
		t.Logf("  %s passed=%v: %s", g.Name, g.Passed, g.Detail)
	}
	if s.Outcome == results.OutcomeInvalid || s.Scaling == nil {
		t.Fatalf("the scaling step is invalid or unrecorded: %v", s.Reasons)
	}
	return s.Scaling
}

// hpaScalesOut (in TestKubernetes, while it is up): the translation's
// HorizontalPodAutoscaler scales the Deployment out from metrics-server's
// pod CPU, its rescale events are the autoscaler's, and the added pods
// serve through the entry.
func hpaScalesOut(t *testing.T) {
	rec := measuredScalingStep(t, "autoscale-k8s", "kubernetes")
	if !strings.Contains(rec.Scaler, "HorizontalPodAutoscaler") || rec.Metric.Count == 0 {
		t.Errorf("scaler %q, metric %+v: want the HPA with samples of its CPU reading", rec.Scaler, rec.Metric)
	}
	byHPA := 0
	for _, e := range rec.Events {
		t.Logf("  event at %.1f s: %d -> %d by %s (%s), running after %s, serving after %s", e.T, e.From, e.To, e.By, e.Reason, seconds(e.RunningSeconds), seconds(e.ServingSeconds))
		if e.To > e.From && e.By == orchestrator.ScaledByAutoscaler {
			byHPA++
		}
	}
	if byHPA == 0 || rec.StartCount != 1 || rec.PeakCount < 2 || rec.ScaleOutSeconds == nil {
		t.Errorf("%d scale-outs by the HPA; instances serving: %d at the start, %d at most, scaled out after %s", byHPA, rec.StartCount, rec.PeakCount, seconds(rec.ScaleOutSeconds))
	}
}

// With the metric source off (VictoriaMetrics stopped), the autoscaler has
// nothing to decide on, and the step says so: invalid, naming the source.
func TestScalingStepWithoutItsMetricIsInvalid(t *testing.T) {
	must(t, "nomad", "job", "stop", "victoriametrics")
	defer must(t, filepath.Join(root, "cluster", "jobs.sh"), "deploy", "victoriametrics")
	job := envOr("ORCHBENCH_IT_JOB_PREFIX", "it") + "-autoscale-off"
	// shorter: the verdict needs no scaling to happen
	spec := strings.NewReplacer(`duration      = "60s"`, `duration      = "20s"`, `duration = "50s"`, `duration = "10s"`, `settle     = "45s"`, `settle     = "5s"`).
		Replace(autoscaleSpec("autoscale-off", job))
	steps := sweepSteps(t, "autoscale-off", spec, "--vm", "")
	if len(steps) != 1 {
		t.Fatalf("%d steps, want 1", len(steps))
	}
	s := steps[0]
	t.Logf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
	if s.Outcome != results.OutcomeInvalid || !strings.Contains(strings.Join(s.Reasons, "; "), "scaling: the autoscaler's metric source could not be read") {
		t.Fatalf("outcome %s %v, want invalid by the scaling gate's unread metric source", s.Outcome, s.Reasons)
	}
	if s.Scaling != nil {
		for _, e := range s.Scaling.Events {
			if e.By == orchestrator.ScaledByAutoscaler && e.To > e.From {
				t.Errorf("the autoscaler scaled out with no metric: %+v", e)
			}
		}
	}
}

func seconds(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f s", *p)
}
