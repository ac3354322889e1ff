package pack

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// nomadOrSkip returns a client when a Nomad agent answers at NOMAD_ADDR
// (default http://127.0.0.1:4646); the renderer tests above cover everything
// that does not need one.
func nomadOrSkip(t *testing.T) *Nomad {
	t.Helper()
	cfg := api.DefaultConfig()
	u, err := url.Parse(cfg.Address)
	if err != nil {
		t.Skipf("NOMAD_ADDR %q is not a URL: %v", cfg.Address, err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		t.Skipf("no Nomad agent at %s (%v); job parsing needs /v1/jobs/parse", cfg.Address, err)
	}
	conn.Close()
	n, err := NewNomad()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Client.Status().Leader(); err != nil {
		t.Skipf("Nomad at %s has no leader yet: %v", cfg.Address, err)
	}
	return n
}

func TestNomadParsesEveryTaewaVariant(t *testing.T) {
	n := nomadOrSkip(t)
	dir, err := Find("taewa")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		variant, driver   string
		count, cpu, cores int
		memory, memoryMax int
	}{
		{"baseline", "docker", 1, 525, 0, 256, 0},
		{"vertical", "docker", 1, 1050, 0, 512, 0},
		{"horizontal", "docker", 3, 525, 0, 256, 0},
		{"unlimited", "docker", 1, 525, 0, 256, 2048},
		{"vertical", "exec", 1, 1050, 0, 512, 0},
	} {
		r, err := p.Render(map[string]string{"variant": c.variant, "driver": c.driver, "resource_scale": "0.25", "scale": "3"}, nil)
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
			t.Errorf("%s/%s: id %s count %d cpu %d memory %d", c.variant, c.driver, *job.ID, *tg.Count, *res.CPU, *res.MemoryMB)
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

func TestParseJobsSaysWhetherNomadRejectedOrWasUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "1 error occurred: job: missing datacenters", http.StatusBadRequest)
	}))
	defer srv.Close()
	r := mustRender(t, loadFixture(t, "features"), nil)
	for addr, want := range map[string]string{
		srv.URL:              "rejected the job rendered from testdata/features/templates/features.nomad.tpl",
		"http://127.0.0.1:1": "cannot reach Nomad at http://127.0.0.1:1 (set NOMAD_ADDR)",
	} {
		c, err := api.NewClient(&api.Config{Address: addr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&Nomad{Client: c}).ParseJobs(r)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", addr, err, want)
		}
	}
}
