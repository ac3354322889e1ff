package contract

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Autoscale is a pack's autoscaling policy, read from the one place Nomad's
// autoscaler reads it too (the group's scaling block), so the harness, the
// translations to the other orchestrators and the autoscaler can never hold
// different policies. The shape is the one every orchestrator can run: one
// CPU check, a target share of each instance's reservation.
type Autoscale struct {
	// Group is the task group the policy sizes.
	Group string `json:"group"`
	Min   int    `json:"min"`
	Max   int    `json:"max"`
	// TargetCPU is the mean CPU use the instances are held at, as a share
	// of what each reserves (0.7 = 70 %).
	TargetCPU float64 `json:"target_cpu"`
	// Cooldown is the wait after a scaling action before the next.
	Cooldown time.Duration `json:"cooldown_ns"`
	// Evaluation is how often the policy is evaluated.
	Evaluation time.Duration `json:"evaluation_ns"`
	// Source is the Nomad Autoscaler's APM plugin; Query its metric.
	Source string `json:"source"`
	Query  string `json:"query"`
}

// ParseAutoscale returns the job's autoscaling policy, nil when it has none.
// A policy in another shape than Autoscale's is an error naming the group:
// it could not be run alike on the other orchestrators.
func ParseAutoscale(job *api.Job) (*Autoscale, error) {
	var out *Autoscale
	for _, g := range job.TaskGroups {
		a, err := ParseGroupAutoscale(deref(job.ID), g)
		switch {
		case err != nil:
			return nil, err
		case a == nil:
			continue
		case out != nil:
			return nil, fmt.Errorf("job %s, group %s, scaling: a second autoscaled group (after %s); one policy per job is supported", deref(job.ID), a.Group, out.Group)
		}
		out = a
	}
	return out, nil
}

// ParseGroupAutoscale reads one group's policy, nil when it has none (or
// it is disabled).
func ParseGroupAutoscale(job string, g *api.TaskGroup) (*Autoscale, error) {
	s := g.Scaling
	if s == nil || (s.Enabled != nil && !*s.Enabled) {
		return nil, nil
	}
	where := fmt.Sprintf("job %s, group %s, scaling", job, deref(g.Name))
	a := &Autoscale{Group: deref(g.Name)}
	if s.Min == nil || s.Max == nil || *s.Min < 1 || *s.Max < *s.Min {
		return nil, fmt.Errorf("%s: min and max must be set, min >= 1 and max >= min", where)
	}
	a.Min, a.Max = int(*s.Min), int(*s.Max)
	p := s.Policy
	var err error
	if a.Cooldown, err = policyDuration(p, "cooldown"); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if a.Evaluation, err = policyDuration(p, "evaluation_interval"); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	name, check, err := onlyBlock(p["check"], "check")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	a.Source, _ = check["source"].(string)
	a.Query, _ = check["query"].(string)
	if a.Source == "" || a.Query == "" {
		return nil, fmt.Errorf("%s: check %q needs a source and a query", where, name)
	}
	strategy, params, err := onlyBlock(check["strategy"], "strategy")
	if err != nil {
		return nil, fmt.Errorf("%s: check %q: %w", where, name, err)
	}
	if strategy != "target-value" {
		return nil, fmt.Errorf("%s: check %q: strategy %q; only target-value (a CPU share held at a target) runs on every orchestrator", where, name, strategy)
	}
	target, ok := number(params["target"])
	if !ok || target <= 0 || target > 100 {
		return nil, fmt.Errorf("%s: check %q: target must be a CPU percentage above 0 and at most 100, got %v", where, name, params["target"])
	}
	a.TargetCPU = target / 100
	return a, nil
}

func policyDuration(p map[string]any, key string) (time.Duration, error) {
	s, ok := p[key].(string)
	if !ok {
		return 0, fmt.Errorf("policy %s must be set (a duration)", key)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("policy %s = %q is not a positive duration", key, s)
	}
	return d, nil
}

// onlyBlock reads a labelled block of the policy as Nomad's API returns it
// ([{label: [{attributes}]}]) and requires exactly one.
func onlyBlock(v any, kind string) (string, map[string]any, error) {
	list, _ := v.([]any)
	var label string
	var body map[string]any
	n := 0
	for _, item := range list {
		m, _ := item.(map[string]any)
		for k, inner := range m {
			n++
			label = k
			bodies, _ := inner.([]any)
			if len(bodies) == 1 {
				body, _ = bodies[0].(map[string]any)
			}
		}
	}
	if n != 1 || body == nil {
		return "", nil, fmt.Errorf("exactly one %s block is supported, found %d", kind, n)
	}
	return label, body, nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}
