package placement

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

func ptr[T any](v T) *T { return &v }

// job is a front end and a back end, or the front end alone.
func job(groups ...string) *api.Job {
	j := &api.Job{ID: ptr("app"), Meta: map[string]string{"orchbench_service": "app-" + groups[0]}}
	for _, g := range groups {
		j.TaskGroups = append(j.TaskGroups, &api.TaskGroup{Name: ptr(g), Services: []*api.Service{{Name: "app-" + g}}})
	}
	return j
}

func constraints(g *api.TaskGroup) []string {
	var out []string
	for _, c := range g.Constraints {
		out = append(out, strings.TrimSpace(c.LTarget+" "+c.Operand+" "+c.RTarget))
	}
	return out
}

func TestApply(t *testing.T) {
	const off = "${meta.orchbench.role} != client"
	const front = "${meta.orchbench.frontend} != false"
	const spread = "distinct_hosts true"
	cases := []struct {
		mode Mode
		job  *api.Job
		want map[string][]string
	}{
		{Scheduler, job("web"), map[string][]string{"web": {off}}},
		{Spread, job("web"), map[string][]string{"web": {off, spread}}},
		{Packed, job("web"), map[string][]string{"web": {off, front}}},
		{Scheduler, job("front", "db"), map[string][]string{"front": {off, front}, "db": {off}}},
		{Spread, job("front", "db"), map[string][]string{"front": {off, front}, "db": {off, spread}}},
		{Packed, job("front", "db"), map[string][]string{"front": {off, front}, "db": {off, front}}},
	}
	for _, c := range cases {
		if err := Apply([]*api.Job{c.job}, c.mode); err != nil {
			t.Fatal(err)
		}
		for _, g := range c.job.TaskGroups {
			got, want := constraints(g), c.want[*g.Name]
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("%s, %d groups, group %s: %q, want %q", c.mode, len(c.job.TaskGroups), *g.Name, got, want)
			}
		}
		for _, g := range c.job.TaskGroups {
			// the front end's companions leave its worker room unless
			// packed onto it (a job of one group has no companions)
			wantAway := len(c.job.TaskGroups) > 1 && *g.Name != "front" && c.mode != Packed
			away := len(g.Affinities) == 1 && g.Affinities[0].LTarget == "${meta.orchbench.frontend}" &&
				g.Affinities[0].Operand == "=" && g.Affinities[0].RTarget == "true" && *g.Affinities[0].Weight < 0
			if away != wantAway || (!wantAway && len(g.Affinities) > 0) {
				t.Errorf("%s, %d groups, group %s: affinities %+v; want one away from the front end's worker: %v", c.mode, len(c.job.TaskGroups), *g.Name, g.Affinities, wantAway)
			}
		}
		if c.job.Meta[MetaKey] != string(c.mode) {
			t.Errorf("%s: job meta %s = %q", c.mode, MetaKey, c.job.Meta[MetaKey])
		}
	}
}

func TestApplyRefusesAnUnknownMode(t *testing.T) {
	j := job("web")
	if err := Apply([]*api.Job{j}, "scattered"); err == nil || !strings.Contains(err.Error(), "valid: scheduler, spread, packed") {
		t.Fatalf("unknown mode: %v", err)
	}
	if len(j.TaskGroups[0].Constraints) != 0 {
		t.Errorf("a refused mode changed the job: %v", constraints(j.TaskGroups[0]))
	}
}

func TestTake(t *testing.T) {
	mode, rest, err := Take(map[string]string{"placement": "spread", "scale": "3"})
	if err != nil || mode != Spread || len(rest) != 1 || rest["scale"] != "3" {
		t.Fatalf("Take: %s %v %v", mode, rest, err)
	}
	if mode, _, err := Take(map[string]string{"scale": "3"}); err != nil || mode != Scheduler {
		t.Fatalf("no placement: %s %v", mode, err)
	}
	if _, _, err := Take(map[string]string{"placement": "packd"}); err == nil || !strings.Contains(err.Error(), `placement = "packd"`) {
		t.Fatalf("a typo: %v", err)
	}
}

func TestMetaAttrRoundTrip(t *testing.T) {
	if k, ok := MetaKeyOf(MetaAttr(NodeFrontend)); !ok || k != NodeFrontend {
		t.Fatalf("MetaKeyOf(MetaAttr) = %q, %v", k, ok)
	}
	for _, attr := range []string{"${attr.kernel.name}", "${meta.x", "meta.x}"} {
		if _, ok := MetaKeyOf(attr); ok {
			t.Errorf("%s read as node meta", attr)
		}
	}
	if got := SwarmNotOn(NodeRole, LoadAvoids); got != "node.labels.orchbench.role!=worker" {
		t.Errorf("SwarmNotOn: %s", got)
	}
}
