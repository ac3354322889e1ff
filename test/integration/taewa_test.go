//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
)

// TestEmbeddedClusterTaewa deploys packs/taewa in two variants through
// `orchbench pack run`, finds it in Consul, checks the answer, the enforced
// cgroup limits and that VictoriaMetrics scraped the allocation's metrics.
func TestEmbeddedClusterTaewa(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := must(t, root+"/cluster/embedded.sh", "up")
	if !strings.Contains(out, "already up") {
		t.Fatalf("a second cluster-up should be a no-op, said:\n%s", out)
	}
	for _, name := range []string{"nomad", "consul"} {
		status := must(t, root+"/.tools/bin/"+name, map[string][]string{"nomad": {"node", "status"}, "consul": {"members"}}[name]...)
		if !strings.Contains(status, "ready") && !strings.Contains(status, "alive") {
			t.Fatalf("%s does not show a ready node:\n%s", name, status)
		}
	}
	ad, err := nomad.New("", "")
	if err != nil {
		t.Fatal(err)
	}
	capacity, err := ad.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node: %.0f MHz per core, %d cores, %d MiB", capacity.MHzPerCore, capacity.Cores, capacity.MemoryMiB)

	for _, v := range []struct {
		variant, driver string
		scale           float64
		cores           float64
		memMiB          int
	}{
		{"baseline", "docker", 0.25, 0.25, 256},
		{"vertical", "docker", 0.25, 0.5, 512},
		// exec has no CPU quota in Nomad 1.10: a whole core becomes an exclusive cpuset
		{"baseline", "exec", 1, 1, 1024},
	} {
		t.Run(v.variant+"-"+v.driver, func(t *testing.T) {
			job := "taewa-" + v.variant + "-" + v.driver
			vars := []string{"--var", "variant=" + v.variant, "--var", "driver=" + v.driver,
				"--var", "job_name=" + job, "--var", fmt.Sprintf("resource_scale=%g", v.scale)}
			must(t, orchbench, append([]string{"pack", "run", "taewa", "--wait"}, vars...)...)
			defer must(t, orchbench, append([]string{"pack", "destroy", "taewa"}, vars...)...)

			info, _, err := ad.Client.Jobs().Info(job, nil)
			if err != nil {
				t.Fatal(err)
			}
			d := &orchestrator.Deployment{Orchestrator: "nomad", Job: job, Version: *info.Version}
			if err := ad.WaitHealthy(ctx, d, 2*time.Minute); err != nil {
				t.Fatal(err)
			}
			eps, err := ad.Endpoints(ctx, d, info.Meta["orchbench_service"])
			if err != nil {
				t.Fatal(err)
			}
			body := get(t, "http://"+eps[0].HostPort()+"/?n=1000")
			if len(body) != 44 || !strings.HasPrefix(body, "The result of this run is :  ") {
				t.Fatalf("answer %q is not the 44-character Taewa sentence", body)
			}

			lims, err := ad.Limits(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			if len(lims) != 1 {
				t.Fatalf("want one task, got %d", len(lims))
			}
			l := lims[0]
			t.Logf("enforced: %.3f cores (cgroup %s), %d MiB; declared %.3f cores, %d MiB", l.EffectiveCores, l.CgroupPath, l.MemoryLimitMiB, l.Declared.Cores, l.Declared.MemoryMiB)
			if !limits.Equal(l.EffectiveCores, v.cores) || l.MemoryLimitMiB != v.memMiB {
				t.Fatalf("variant %s: enforced %.3f cores / %d MiB, want %.3f / %d", v.variant, l.EffectiveCores, l.MemoryLimitMiB, v.cores, v.memMiB)
			}

			// Nomad publishes allocation metrics; VictoriaMetrics scrapes them via Consul discovery
			q := fmt.Sprintf(`nomad_client_allocs_cpu_total_ticks{alloc_id=%q}`, l.ID)
			eventually(t, 90*time.Second, "VictoriaMetrics has the allocation's CPU series", func() error {
				n, err := vmSeries(q)
				if err == nil && n == 0 {
					err = fmt.Errorf("no series for %s", q)
				}
				return err
			})
		})
	}
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	return string(b)
}

// vmSeries counts the series an instant PromQL query returns.
func vmSeries(query string) (int, error) {
	resp, err := http.Get("http://127.0.0.1:8428/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("query %s: status %s", query, r.Status)
	}
	return len(r.Data.Result), nil
}
