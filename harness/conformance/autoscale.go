package conformance

import (
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/kubernetes"
	"github.com/orchbench/orchbench/harness/orchestrator/swarm"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	"github.com/orchbench/orchbench/harness/pack"
)

// A pack that declares the variable "autoscale" renders it as one scaling
// policy (a group's scaling block) of the shape every orchestrator runs,
// exactly as declared: starting at min, in the group that registers the
// scaled service, behind a measured service the load can reach new
// instances through, and the same after translation to Swarm and
// Kubernetes. Off (the default), no group has a policy.

// declaredPolicy is what the check asks for; each value differs from the
// variable's defaults, so a template that ignores one is caught.
var declaredPolicy = contract.Autoscale{Min: 2, Max: 5, TargetCPU: 0.6, Cooldown: 20 * time.Second, Evaluation: 5 * time.Second}

const declaredPolicyVar = `{"enabled": true, "min": 2, "max": 5, "target_cpu": 0.6, "cooldown": "20s", "evaluation": "5s"}`

func checkAutoscale(c Checker, p *pack.Pack, add func(string, string, ...any)) {
	if _, ok := p.Variables["autoscale"]; !ok {
		return
	}
	if off, ok := c.render(p, map[string]string{"variant": "baseline"}, add); ok {
		for _, a := range off.apps {
			if a.Autoscale != nil {
				add(off.where, "job %s has a scaling policy with autoscale off", a.Job)
			}
		}
	}
	if _, err := p.Render(map[string]string{"autoscale": `{"enabled": true, "min": 3, "max": 2}`}, nil); err == nil {
		add("--var autoscale={min = 3, max = 2}", "renders; max below min must fail with a message")
	}
	s, ok := c.render(p, map[string]string{"variant": "baseline", "autoscale": declaredPolicyVar}, add)
	if !ok {
		return
	}
	var policy *contract.Autoscale
	var app contract.App
	for i, a := range s.apps {
		if a.Autoscale != nil {
			if policy != nil {
				add(s.where, "more than one job has a scaling policy; the harness follows one")
			}
			policy, app = a.Autoscale, s.apps[i]
		}
	}
	if policy == nil {
		add(s.where, "no group has a scaling policy: the autoscale variable is not rendered as a scaling block")
		return
	}
	got := *policy
	got.Group, got.Source, got.Query = "", "", ""
	if got != declaredPolicy {
		add(s.where, "the scaling policy is %+v, want the declared %+v", got, declaredPolicy)
	}
	scaled := false
	for _, t := range s.tasks {
		if t.group != policy.Group {
			continue
		}
		if t.count != declaredPolicy.Min {
			add(s.where, "group %s starts with %d instances, want min %d", t.group, t.count, declaredPolicy.Min)
		}
		if t.measured {
			add(s.where, "group %s is autoscaled and is the measured service: the load is aimed at the instances there were when it began, so those added would get none; put an entry in front (packs/taewa)", t.group)
		}
		scaled = scaled || t.service
	}
	if !scaled {
		add(s.where, "the autoscaled group %s does not register the scaled service %q", policy.Group, app.ScaledService())
	}
	for _, job := range s.jobs {
		if *job.ID != app.Job {
			continue
		}
		sp, err := swarm.Translate(job, swarm.Options{MHzPerCore: max(s.mhzPerCore, 1)})
		if err != nil {
			add(s.where, "does not translate to Swarm with autoscale: %v", err)
		} else {
			checkTranslatedPolicy(s.where, "Swarm", sp.Services, policy, add)
		}
		w, err := orchestrator.NewWorkload(job)
		if err != nil {
			add(s.where, "%v", err)
			continue
		}
		kp, err := kubernetes.Translate(w, max(s.mhzPerCore, 1))
		if err != nil {
			add(s.where, "does not translate to Kubernetes with autoscale: %v", err)
		} else {
			checkTranslatedPolicy(s.where, "Kubernetes", kp.Services, policy, add)
		}
	}
}

func checkTranslatedPolicy(where, target string, services []*translate.Service, policy *contract.Autoscale, add func(string, string, ...any)) {
	n := 0
	for _, svc := range services {
		if svc.Autoscale == nil {
			continue
		}
		n++
		if *svc.Autoscale != *policy {
			add(where, "on %s the policy is %+v, want the job's %+v", target, *svc.Autoscale, *policy)
		}
	}
	if n != 1 {
		add(where, "on %s %d services carry a scaling policy, want 1", target, n)
	}
}
