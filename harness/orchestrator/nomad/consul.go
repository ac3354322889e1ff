package nomad

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

type consulEntry struct {
	Node struct {
		Node string `json:"Node"`
	} `json:"Node"`
	Service struct {
		ID      string `json:"ID"`
		Service string `json:"Service"`
		Address string `json:"Address"`
		Port    int    `json:"Port"`
	} `json:"Service"`
	Checks []struct {
		Status string `json:"Status"`
	} `json:"Checks"`
}

// Nomad names Consul service IDs _nomad-task-<allocID>-<group/task>-<service>-<port>.
func (e consulEntry) allocID() string {
	id := strings.TrimPrefix(e.Service.ID, "_nomad-task-")
	if len(id) >= 36 {
		return id[:36]
	}
	return ""
}

func (e consulEntry) passing() bool {
	for _, c := range e.Checks {
		if c.Status != "passing" {
			return false
		}
	}
	return true
}

func (a *Orchestrator) consulHealth(ctx context.Context, service string, passingOnly bool) ([]consulEntry, error) {
	u := a.ConsulAddr + "/v1/health/service/" + url.PathEscape(service)
	if passingOnly {
		u += "?passing=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("consul: health of %s: %w", service, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("consul: health of %s: %s", service, resp.Status)
	}
	var entries []consulEntry
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		return nil, fmt.Errorf("consul: health of %s: %w", service, err)
	}
	return entries, nil
}

// Endpoints lists the passing Consul instances of service that belong to the
// deployment's current allocations.
func (a *Orchestrator) Endpoints(ctx context.Context, d *orchestrator.Deployment, service string) ([]orchestrator.Endpoint, error) {
	allocs, err := a.currentAllocs(ctx, d)
	if err != nil {
		return nil, err
	}
	current := map[string]bool{}
	for _, s := range allocs {
		current[s.ID] = true
	}
	entries, err := a.consulHealth(ctx, service, true)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.Endpoint
	for _, e := range entries {
		if !current[e.allocID()] {
			continue
		}
		out = append(out, orchestrator.Endpoint{Service: service, Address: e.Service.Address, Port: e.Service.Port, Instance: e.allocID(), Node: e.Node.Node,
			Entry: orchestrator.EntryHostPort})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("consul: no passing instance of service %q belongs to job %s version %d", service, d.Job, d.Version)
	}
	return out, nil
}
