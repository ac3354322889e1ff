package pack_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/kubernetes"
	"github.com/orchbench/orchbench/harness/orchestrator/swarm"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

func taewaJob(t *testing.T, vars map[string]string) (*api.Job, error) {
	return packJob(t, "taewa", vars)
}

// With autoscale on, taewa's instances start at min under the policy the
// variable declares, behind an entry that is the measured service; Swarm
// and Kubernetes take the same policy with the group, and the entry's
// backend becomes the instances' DNS name.
func TestTaewaAutoscaleRendersOnePolicyEveryOrchestratorRuns(t *testing.T) {
	job, err := taewaJob(t, map[string]string{"autoscale": `{"enabled": true, "min": 2, "max": 5, "target_cpu": 0.6, "cooldown": "20s", "evaluation": "5s"}`, "resource_scale": "0.25"})
	if err != nil {
		t.Fatal(err)
	}
	app, err := contract.ParseApp(job)
	if err != nil {
		t.Fatal(err)
	}
	as := app.Autoscale
	if as == nil || as.Group != "taewa" || as.Min != 2 || as.Max != 5 || as.TargetCPU != 0.6 || as.Cooldown.String() != "20s" || as.Evaluation.String() != "5s" || as.Source != "prometheus" {
		t.Fatalf("policy %+v", as)
	}
	if want := `orchbench_task_cpu_seconds_total{nomad_job="taewa-baseline",task_group="taewa"}[15s])) / 0.25`; !strings.Contains(as.Query, want) {
		t.Errorf("query %q, want the node probe's CPU series of the group over its quarter core", as.Query)
	}
	if app.Service != "taewa" || app.Scaled != "taewa-web" {
		t.Errorf("measured %q, scaled %q; want the entry taewa before taewa-web", app.Service, app.Scaled)
	}
	for _, g := range job.TaskGroups {
		if *g.Name == "taewa" && *g.Count != 2 {
			t.Errorf("the instances start at %d, want min 2", *g.Count)
		}
	}
	w, err := orchestrator.NewWorkload(job)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := swarm.Translate(job, swarm.Options{MHzPerCore: 2000})
	if err != nil {
		t.Fatalf("swarm: %v", err)
	}
	kp, err := kubernetes.Translate(w, 2000)
	if err != nil {
		t.Fatalf("kubernetes: %v", err)
	}
	for name, services := range map[string][]*translate.Service{"swarm": sp.Services, "kubernetes": kp.Services} {
		scaled := 0
		for _, svc := range services {
			switch svc.Group {
			case "taewa":
				if svc.Autoscale == nil || *svc.Autoscale != *as || svc.Replicas != 2 {
					t.Errorf("%s: the instances' service has policy %+v and %d replicas, want the job's and 2", name, svc.Autoscale, svc.Replicas)
				}
				scaled++
			case "entry":
				want := regexp.MustCompile(`^tcp-balance --listen \S+ --backend taewa-web:[0-9]+ --backends-file /local/backends$`)
				if got := strings.Join(svc.Container.Args, " "); !want.MatchString(got) {
					t.Errorf("%s: the entry runs %q, want the instances' DNS name as its backend", name, got)
				}
				if svc.Autoscale != nil {
					t.Errorf("%s: the entry is autoscaled", name)
				}
			}
		}
		if scaled != 1 {
			t.Errorf("%s: %d autoscaled services, want 1", name, scaled)
		}
	}
}

func TestTaewaAutoscaleRefusesWhatCannotBe(t *testing.T) {
	for name, c := range map[string]struct{ vars map[string]string }{
		"max below min":      {map[string]string{"autoscale": `{"enabled": true, "min": 3, "max": 2}`}},
		"target as percent":  {map[string]string{"autoscale": `{"enabled": true, "target_cpu": 70}`}},
		"with scale":         {map[string]string{"autoscale": `{"enabled": true}`, "scale": "3"}},
		"fractional minimum": {map[string]string{"autoscale": `{"enabled": true, "min": 1.5}`}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := taewaJob(t, c.vars); err == nil || !strings.Contains(err.Error(), "autoscale") {
				t.Fatalf("rendered, or failed without naming autoscale: %v", err)
			}
		})
	}
}
