//go:build integration

package integration

import (
	"testing"

	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/pack"
)

// TestNomadParsesEveryTaewaVariant renders every Taewa variant and has the
// cluster's Nomad parse and plan it: the renderer's output must be a job
// Nomad accepts, with the counts and resources the variant declares.
func TestNomadParsesEveryTaewaVariant(t *testing.T) {
	n, err := nomad.New("", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Client.Status().Leader(); err != nil {
		t.Fatalf("the cluster's Nomad has no leader: %v", err)
	}
	dir, err := pack.Find("taewa")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pack.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// scale applies to every variant when set (0 keeps the variant's own)
	for _, c := range []struct {
		variant, driver, scale string
		count, cpu             int
		memory, memoryMax      int
	}{
		{"baseline", "docker", "3", 3, 525, 256, 0},
		{"vertical", "docker", "3", 3, 1050, 512, 0},
		{"horizontal", "docker", "3", 3, 525, 256, 0},
		{"horizontal", "docker", "0", 2, 525, 256, 0},
		{"baseline", "docker", "0", 1, 525, 256, 0},
		{"unlimited", "docker", "3", 3, 525, 256, 2048},
		{"vertical", "exec", "3", 3, 1050, 512, 0},
	} {
		r, err := p.Render(map[string]string{"variant": c.variant, "driver": c.driver, "resource_scale": "0.25", "scale": c.scale, "mhz_per_core": "2100"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := n.ParseJobs(r)
		if err != nil {
			t.Fatalf("%s/%s: %v", c.variant, c.driver, err)
		}
		job := jobs[0]
		tg := job.TaskGroups[0]
		res := tg.Tasks[0].Resources
		if *job.ID != "taewa-"+c.variant || *tg.Count != c.count || *res.CPU != c.cpu || *res.MemoryMB != c.memory {
			t.Errorf("%s/%s scale %s: id %s count %d cpu %d memory %d", c.variant, c.driver, c.scale, *job.ID, *tg.Count, *res.CPU, *res.MemoryMB)
		}
		if c.memoryMax > 0 && (res.MemoryMaxMB == nil || *res.MemoryMaxMB != c.memoryMax) {
			t.Errorf("%s: memory_max %v, want %d", c.variant, res.MemoryMaxMB, c.memoryMax)
		}
		if job.Meta["orchbench_variant"] != c.variant || len(tg.Services) != 1 || tg.Services[0].Provider != "consul" {
			t.Errorf("%s: meta %v services %v", c.variant, job.Meta, tg.Services)
		}
		plan, err := n.Plan(job)
		if err != nil {
			t.Fatalf("%s: plan: %v", c.variant, err)
		}
		if plan.Annotations == nil {
			t.Errorf("%s: plan without annotations", c.variant)
		}
	}
}
