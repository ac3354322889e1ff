package vmpush

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/testenv"
	"github.com/orchbench/orchbench/harness/testutil"
)

// vmBinary is the VictoriaMetrics the repository's tool installer pins.
const vmBinary = "../../.tools/bin/victoria-metrics"

// TestPushTwiceToRealVictoriaMetricsHasNoDuplicates starts the real binary
// with the cluster's dedup flag, pushes an archive twice and counts samples.
func TestPushTwiceToRealVictoriaMetricsHasNoDuplicates(t *testing.T) {
	bin, err := filepath.Abs(vmBinary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		testenv.Missing(t, "VictoriaMetrics binary absent (%v); `just tools` builds it", err)
	}
	if testing.Short() {
		t.Skip("starts a VictoriaMetrics server")
	}
	port := testutil.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"-retentionPeriod=1d",
		"-storageDataPath="+t.TempDir(),
		"-httpListenAddr=127.0.0.1:"+strconv.Itoa(port),
		"-search.latencyOffset=0s",
		"-dedup.minScrapeInterval=1ms",
		"-loggerLevel=ERROR",
	)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	waitHealthy(t, base)

	// Recent timestamps: older than the retention period would be dropped.
	start := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	a, rec := writeTestArchive(t, start, 2)
	for i := 0; i < 2; i++ {
		if _, err := PushSweep(context.Background(), a, rec.ID, base); err != nil {
			t.Fatalf("push %d: %v", i+1, err)
		}
	}
	if resp, err := http.Get(base + "/internal/force_flush"); err == nil {
		resp.Body.Close()
	}
	// Per second series: 2 seconds per step; summary series: 1 sample per step.
	checks := map[string]float64{
		`count_over_time(orchbench_second_achieved_rps{sweep="` + rec.ID + `",step="` + rec.Plan[0].ID + `"}[1h])`:                              2,
		`count_over_time(orchbench_step_achieved_rps{sweep="` + rec.ID + `",step="` + rec.Plan[1].ID + `"}[1h])`:                                1,
		`count_over_time(orchbench_step_latency_ms{sweep="` + rec.ID + `",step="` + rec.Plan[0].ID + `",kind="corrected",quantile="0.99"}[1h])`: 1,
		`count(count_over_time(orchbench_step_valid{sweep="` + rec.ID + `"}[1h]))`:                                                              2,
	}
	deadline := time.Now().Add(20 * time.Second)
	for q, want := range checks {
		for {
			got, ok := queryScalar(t, base, q)
			if ok && got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %v (found %v), want %v", q, got, ok, want)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The value itself survived: achieved of the first step is 0.99 × offered.
	q := `orchbench_step_achieved_rps{sweep="` + rec.ID + `",step="` + rec.Plan[0].ID + `"}`
	v, ok := queryAt(t, base, q, start.Add(9*time.Second))
	if want := rec.Plan[0].OfferedRPS * 0.99; !ok || v != want {
		t.Fatalf("%s = %v (%v), want %v", q, v, ok, want)
	}
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("VictoriaMetrics did not become healthy")
}

func queryScalar(t *testing.T, base, q string) (float64, bool) {
	return queryAt(t, base, q, time.Now())
}

// queryAt runs an instant query and returns the single result's value.
func queryAt(t *testing.T, base, q string, at time.Time) (float64, bool) {
	t.Helper()
	u := base + "/api/v1/query?" + url.Values{"query": {q}, "time": {strconv.FormatInt(at.Unix(), 10)}, "nocache": {"1"}}.Encode()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Status != "success" || len(body.Data.Result) != 1 {
		return 0, false
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}
