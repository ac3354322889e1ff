package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The policies remote up writes. Each agent gets what it needs and no
// more; the harness may deploy, read and drain but not manage ACLs.
const (
	consulAgentRules = `node_prefix "" { policy = "write" }
service_prefix "" { policy = "read" }`
	// Nomad agents register their tasks' services and checks and render
	// templates that read the catalog (the packs' upstreams)
	consulNomadRules = `agent_prefix "" { policy = "read" }
node_prefix "" { policy = "write" }
service_prefix "" { policy = "write" }
key_prefix "" { policy = "read" }`
	// the harness reads health and keeps its setup markers
	// (harness/orchestrator MarkerRoot) in the KV store
	consulHarnessRules = `agent_prefix "" { policy = "read" }
node_prefix "" { policy = "read" }
service_prefix "" { policy = "read" }
key_prefix "orchbench/" { policy = "write" }
operator = "read"`
	// VictoriaMetrics' scrapes and the node agent's allocation lookups
	consulMetricsRules = `agent_prefix "" { policy = "read" }
node_prefix "" { policy = "read" }
service_prefix "" { policy = "read" }`
	nomadMetricsRules = `namespace "*" {
  policy = "read"
}
node {
  policy = "read"
}
agent {
  policy = "read"
}`
	nomadHarnessRules = `namespace "*" {
  policy = "write"
}
node {
  policy = "write"
}
agent {
  policy = "read"
}
operator {
  policy = "read"
}
plugin {
  policy = "read"
}`
)

type consulPolicy struct {
	ID          string `json:",omitempty"`
	Name        string
	Description string
	Rules       string
}

type consulToken struct {
	AccessorID  string `json:",omitempty"`
	SecretID    string
	Description string
	Policies    []struct{ Name string }
}

// consulACL writes the policies and the tokens whose secrets the agents'
// configurations already carry; run again, it updates them in place.
func consulACL(ctx context.Context, mgmt *apiClient, s *Secrets) (changed bool, err error) {
	for _, p := range []struct{ name, token, rules, desc string }{
		{"orchbench-agent", s.ConsulAgent, consulAgentRules, "every Consul agent's own token"},
		{"orchbench-nomad", s.ConsulNomad, consulNomadRules, "the Nomad agents' token for Consul"},
		{"orchbench-harness", s.ConsulHarness, consulHarnessRules, "the orchbench harness"},
		{"orchbench-metrics", s.ConsulMetrics, consulMetricsRules, "VictoriaMetrics' scrapes (read only)"},
	} {
		c, err := consulEnsurePolicy(ctx, mgmt, consulPolicy{Name: p.name, Description: "orchbench remote: " + p.desc, Rules: p.rules})
		if err != nil {
			return changed, fmt.Errorf("Consul policy %s: %w", p.name, err)
		}
		changed = changed || c
		c, err = consulEnsureToken(ctx, mgmt, p.token, p.name, "orchbench remote: "+p.desc)
		if err != nil {
			return changed, fmt.Errorf("Consul token for %s: %w", p.name, err)
		}
		changed = changed || c
	}
	return changed, nil
}

func consulEnsurePolicy(ctx context.Context, c *apiClient, want consulPolicy) (bool, error) {
	var have consulPolicy
	err := c.do(ctx, "GET", "/v1/acl/policy/name/"+want.Name, nil, &have)
	var se *StatusError
	switch {
	case err == nil:
		if strings.TrimSpace(have.Rules) == strings.TrimSpace(want.Rules) && have.Description == want.Description {
			return false, nil
		}
		want.ID = have.ID
		return true, c.do(ctx, "PUT", "/v1/acl/policy/"+have.ID, want, nil)
	case errors.As(err, &se) && se.Code == 404:
		return true, c.do(ctx, "PUT", "/v1/acl/policy", want, nil)
	default:
		return false, err
	}
}

func consulEnsureToken(ctx context.Context, c *apiClient, secret, policy, desc string) (bool, error) {
	var have consulToken
	err := c.with(secret).do(ctx, "GET", "/v1/acl/token/self", nil, &have)
	want := consulToken{SecretID: secret, Description: desc, Policies: []struct{ Name string }{{policy}}}
	if err == nil {
		if len(have.Policies) == 1 && have.Policies[0].Name == policy && have.Description == desc {
			return false, nil
		}
		want.AccessorID = have.AccessorID
		return true, c.do(ctx, "PUT", "/v1/acl/token/"+have.AccessorID, want, nil)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 403 {
		return false, err
	}
	return true, c.do(ctx, "PUT", "/v1/acl/token", want, nil)
}

// nomadACL bootstraps Nomad's ACLs with the operator-made management
// secret (once; a bootstrapped cluster must accept that secret) and makes
// the harness's policy and token.
func nomadACL(ctx context.Context, anon *apiClient, s *Secrets) (changed bool, err error) {
	mgmt := anon.with(s.NomadManagement)
	if err := mgmt.do(ctx, "GET", "/v1/acl/token/self", nil, nil); err != nil {
		var se *StatusError
		if !errors.As(err, &se) || (se.Code != 403 && se.Code != 400) {
			return false, fmt.Errorf("Nomad ACL: %w", err)
		}
		if err := anon.do(ctx, "POST", "/v1/acl/bootstrap", map[string]string{"BootstrapSecret": s.NomadManagement}, nil); err != nil {
			if strings.Contains(err.Error(), "already done") {
				return false, fmt.Errorf("Nomad's ACLs were bootstrapped with another token than %s (a cluster of another inventory? `nomad acl bootstrap -reset` is documented by Nomad): %w", s.Path("nomad-management.token"), err)
			}
			return false, fmt.Errorf("Nomad ACL bootstrap: %w", err)
		}
		changed = true
	}
	for _, t := range []struct {
		name, rules, desc string
		secret            string
		set               func(string) error
	}{
		{"orchbench-harness", nomadHarnessRules, "the orchbench harness", s.NomadHarness, s.setNomadHarness},
		{"orchbench-metrics", nomadMetricsRules, "the node agents' allocation lookups (read only)", s.NomadMetrics, s.setNomadMetrics},
	} {
		c, err := nomadEnsureToken(ctx, anon, mgmt, t.name, t.rules, "orchbench remote: "+t.desc, t.secret, t.set)
		if err != nil {
			return changed, err
		}
		changed = changed || c
	}
	return changed, nil
}

// nomadEnsureToken writes the policy name and a client token of it; a
// token already made (its secret kept here) that still works is kept.
func nomadEnsureToken(ctx context.Context, anon, mgmt *apiClient, name, rules, desc, secret string, set func(string) error) (changed bool, err error) {
	type policy struct{ Name, Description, Rules string }
	want := policy{Name: name, Description: desc, Rules: rules}
	var have policy
	err = mgmt.do(ctx, "GET", "/v1/acl/policy/"+want.Name, nil, &have)
	var se *StatusError
	if err != nil && !(errors.As(err, &se) && se.Code == 404) {
		return false, fmt.Errorf("Nomad policy %s: %w", name, err)
	}
	if err != nil || strings.TrimSpace(have.Rules) != strings.TrimSpace(want.Rules) {
		if err := mgmt.do(ctx, "POST", "/v1/acl/policy/"+want.Name, want, nil); err != nil {
			return false, fmt.Errorf("Nomad policy %s: %w", name, err)
		}
		changed = true
	}
	if secret != "" {
		if err := anon.with(secret).do(ctx, "GET", "/v1/acl/token/self", nil, nil); err == nil {
			return changed, nil
		}
	}
	type token struct {
		Name, Type string
		Policies   []string
		SecretID   string `json:",omitempty"`
	}
	var made token
	if err := mgmt.do(ctx, "POST", "/v1/acl/token", token{Name: name, Type: "client", Policies: []string{want.Name}}, &made); err != nil {
		return changed, fmt.Errorf("Nomad token %s: %w", name, err)
	}
	return true, set(made.SecretID)
}
