//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

// TestFrontierOnNomad deploys packs/frontier with the study's 3-instance
// shape and shows on the cluster what study 003 is about: the entry
// spreading connections over the three instances, the pack's probe passing
// through /cached, /remote serialised by the one
// remote service behind all three instances (two requests to two instances
// answered 0.75 s apart), /cached counting hits in the one Redis, the
// pool's gauge counting invocations, and the probe failing, with the web
// tier's 503, while Redis is down.
func TestFrontierOnNomad(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	for _, image := range []string{"orchbench/frontier:local", "orchbench/redis:local"} {
		if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
			t.Fatalf("image %s is missing: run cluster/images.sh frontier", image)
		}
	}
	const job = "it-frontier"
	vars := []string{"--var", "job_name=" + job, "--var", "scale=3", "--var", "resource_scale=0.1", "--var", "route=/cached", "--var", "cache_keys=1"}
	must(t, orchbench, append([]string{"pack", "run", "frontier", "--wait", "--timeout", "4m"}, vars...)...)
	defer must(t, orchbench, append([]string{"pack", "destroy", "frontier"}, vars...)...)
	ad, dep, probe, eps := probedOnNomad(t, ctx, job)
	if len(eps) != 1 {
		t.Fatalf("%d instances of the entry registered, want 1: %v", len(eps), eps)
	}
	entry := "http://" + eps[0].HostPort()
	web, err := ad.Endpoints(ctx, dep, job+"-web")
	if err != nil || len(web) != 3 {
		t.Fatalf("%d instances of the web tier registered (%v), want 3: %v", len(web), err, web)
	}
	base := func(i int) string { return "http://" + web[i].HostPort() }
	// the web tier restarts once when its upstreams register, the entry
	// when the instances do: wait for their answers
	eventually(t, time.Minute, "every instance answers /remote", func() error {
		for i := range web {
			if status, body, _ := frontierGet(base(i) + "/remote"); status != 200 {
				return fmt.Errorf("%s/remote: %d %s", base(i), status, body)
			}
		}
		return nil
	})
	eventually(t, time.Minute, "the pack's probe passes through the entry", func() error {
		if g := probe.Check(ctx, eps); !g.Passed {
			return fmt.Errorf("%s", g.Detail)
		}
		return nil
	})

	t.Run("the entry spreads connections over the instances", func(t *testing.T) {
		want := map[string]bool{}
		for _, ep := range web {
			want[ep.HostPort()] = true
		}
		served := map[string]int{}
		for i := 0; i < 6; i++ {
			status, body, hdr := frontierGet(entry + "/")
			if status != 200 {
				t.Fatalf("GET %s/: %d %s", entry, status, body)
			}
			by := hdr.Get("X-Served-By")
			if !want[by] {
				t.Errorf("answered by %q, which is no web tier instance of %v", by, want)
			}
			served[by]++
		}
		t.Logf("6 connections through the entry %s: %v", entry, served)
		if len(served) != 3 {
			t.Errorf("6 connections reached %d instances (%v), want all 3 in turn", len(served), served)
		}
	})

	t.Run("remote serialises across instances", func(t *testing.T) {
		type answer struct {
			ended time.Duration
			body  string
		}
		var mu sync.Mutex
		var got []answer
		var wg sync.WaitGroup
		began := time.Now()
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, body, _ := frontierGet(base(i) + "/remote")
				if status != 200 {
					t.Errorf("instance %d /remote: %d %s", i, status, body)
				}
				mu.Lock()
				got = append(got, answer{time.Since(began), body})
				mu.Unlock()
			}()
		}
		wg.Wait()
		sort.Slice(got, func(i, j int) bool { return got[i].ended < got[j].ended })
		t.Logf("two instances, one remote service: %v and %v: %s, %s", got[0].ended.Round(time.Millisecond), got[1].ended.Round(time.Millisecond), got[0].body, got[1].body)
		if gap := got[1].ended - got[0].ended; gap < 650*time.Millisecond || gap > 1100*time.Millisecond {
			t.Errorf("the second answer came %v after the first, want about 750 ms: the remote service served them side by side", gap)
		}
	})

	t.Run("cached counts hits in the one Redis", func(t *testing.T) {
		if status, body, _ := frontierDo(http.MethodPost, base(0)+"/flush"); status != 200 {
			t.Fatalf("POST /flush: %d %s", status, body)
		}
		for i := 0; i < 6; i++ {
			if status, body, hdr := frontierGet(base(i%3) + "/cached"); status != 200 || hdr.Get("X-Cache") != map[bool]string{true: "miss", false: "hit"}[i == 0] {
				t.Errorf("/cached %d on instance %d: %d %s X-Cache %q", i, i%3, status, body, hdr.Get("X-Cache"))
			}
		}
		var stats struct {
			Cache struct{ Hits, Misses int }
			Pool  map[string]float64
		}
		_, body, _ := frontierGet(base(2) + "/stats")
		if err := json.Unmarshal([]byte(body), &stats); err != nil || stats.Cache.Hits != 5 || stats.Cache.Misses != 1 {
			t.Errorf("/stats after 6 requests over 3 instances: %s (%v), want 5 hits and 1 miss", body, err)
		}
		for i := 0; i < 4; i++ {
			if status, body, _ := frontierGet(base(i%3) + "/alternate"); status != 200 || !strings.HasPrefix(body, `{"from":"pool"`) {
				t.Errorf("/alternate: %d %s", status, body)
			}
		}
		_, body, _ = frontierGet(base(1) + "/stats")
		if err := json.Unmarshal([]byte(body), &stats); err != nil || stats.Pool["invocations"] != 4 || stats.Pool["peak_in_flight"] < 1 {
			t.Errorf("/stats after 4 invocations: %s (%v)", body, err)
		}
	})

	t.Run("the probe fails while Redis is down", func(t *testing.T) {
		redis := onlyEndpoint(t, ctx, ad, dep, job+"-redis")
		c, err := net.DialTimeout("tcp", redis, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// Nomad restarts the task after its restart delay (2 s)
		fmt.Fprint(c, "SHUTDOWN NOSAVE\r\n")
		io.Copy(io.Discard, c)
		c.Close()
		status, body, _ := frontierGet(base(1) + "/cached")
		t.Logf("/cached with Redis down: %d %s", status, body)
		// the first request may meet the client still counting as ready, its
		// command cut off: a failure of the same Redis, also 503
		if status != http.StatusServiceUnavailable || !strings.HasPrefix(body, "cached: redis "+redis+" is not connected") && !strings.HasPrefix(body, "cached: redis "+redis+" failed: ") {
			t.Errorf("/cached with Redis down answered %d %q, want 503 and the web tier's message", status, body)
		}
		g := probe.Check(ctx, eps)
		t.Logf("probe with Redis down: passed %v: %s", g.Passed, g.Detail)
		if g.Passed || !strings.Contains(g.Detail, "/cached: status 503, want 200") {
			t.Errorf("the probe passed without Redis, or failed for another reason: %+v", g)
		}
		eventually(t, time.Minute, "the probe passes again once Redis is back", func() error {
			if g := probe.Check(ctx, eps); !g.Passed {
				return fmt.Errorf("%s", g.Detail)
			}
			return nil
		})
	})
}

func frontierGet(url string) (int, string, http.Header) { return frontierDo(http.MethodGet, url) }

func frontierDo(method, url string) (int, string, http.Header) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, err.Error(), nil
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error(), nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestBrokenStepIsNotCarriedIntoTheNext breaks the remote route of a
// one-instance frontier on purpose (10 a second against a worker serving
// 1.33, with a 1 s client timeout), twice on one deployment. The first
// repetition leaves about 30 s of abandoned requests queued at the remote
// service's one worker, so the second one's probe times out: the runner
// must deploy anew and measure that repetition broken, not archive it
// invalid on the first one's debris (study 003's remote and cached
// configurations lost two repetitions of three that way).
func TestBrokenStepIsNotCarriedIntoTheNext(t *testing.T) {
	prefix := envOr("ORCHBENCH_IT_JOB_PREFIX", "it")
	spec := fmt.Sprintf(`sweep "broken-backlog" {
  seed          = 5
  repetitions   = 2
  deploy        = "per-configuration"
  duration      = "5s"
  warmup        = "0s"
  early_stop    = true
  orchestrators = ["nomad"]
  app "remote" {
    pack     = "frontier"
    variants = ["baseline"]
    vars     = { job_name = "%s-backlog", route = "/remote", resource_scale = 0.25 }
    rates    = [10]
    timeout  = "1s"
  }
  slo {
    p99_ms             = 5000
    min_achieved_ratio = 0.95
    max_error_ratio    = 0.01
  }
}
`, prefix)
	steps := sweepSteps(t, "broken-backlog", spec, "--vm", "")
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2", len(steps))
	}
	for _, s := range steps {
		t.Logf("%s: %s %v; remade after: %v", s.Step, s.Outcome, s.Reasons, s.Metadata["remade_after"])
		if s.Outcome != results.OutcomeBroken {
			t.Errorf("%s: %s %v, want broken (the remote route cannot hold 10 a second)", s.Step, s.Outcome, s.Reasons)
		}
	}
	second := steps[1]
	if steps[0].Rep == 2 {
		second = steps[0]
	}
	if why, _ := second.Metadata["remade_after"].(string); !strings.Contains(why, "broke") {
		t.Errorf("repetition 2 ran on the first one's deployment (remade after %q): its backlog should have made the runner deploy anew", why)
	}
}
