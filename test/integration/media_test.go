//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices/dataset"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/testutil"
)

// TestMediaMicroservices runs experiments/media-microservices-quick.hcl
// (the media microservices' baseline under DeathStarBench's compose-review
// workload, its dataset loaded and verified by the pack's hooks) on Nomad
// and Swarm: every step valid, every one of the 32 tasks under the same CPU
// policy on both (TestKubernetes runs it on Kubernetes while its cluster is
// up). Then a deployment whose first movie lost its plot fails the pack's
// probe, where the same deployment passed it before.
func TestMediaMicroservices(t *testing.T) {
	started := time.Now()
	steps := mediaQuickSweep(t, "nomad", "swarm")
	t.Logf("quick sweep on Nomad and Swarm: %s", time.Since(started).Round(time.Second))
	policies := 0
	for _, row := range results.Parity(steps) {
		if row.Aspect == "log shipping" && row.Mismatch {
			t.Errorf("parity: log shipping differs: %v", row.Values)
		}
		if !strings.HasSuffix(row.Aspect, " policy") {
			continue
		}
		policies++
		if row.Mismatch {
			t.Errorf("parity: %s differs: %v", row.Aspect, row.Values)
		}
	}
	if policies < 32 {
		t.Errorf("parity compared the CPU policy of %d tasks, want the pack's 32", policies)
	}
	t.Run("lost-plot-fails-the-probe", mediaLostPlot)
	t.Logf("media microservices: %s in all", time.Since(started).Round(time.Second))
}

// mediaQuickSweep runs experiments/media-microservices-quick.hcl on the
// given orchestrators at one repetition and returns its steps; every step
// must be valid and have composed reviews.
func mediaQuickSweep(t *testing.T, orchestrators ...string) []results.StepResult {
	t.Helper()
	spec, err := os.ReadFile(filepath.Join(root, "experiments", "media-microservices-quick.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	list := `"` + strings.Join(orchestrators, `", "`) + `"`
	quick := strings.NewReplacer(`repetitions = 2`, `repetitions = 1`,
		`orchestrators = ["nomad", "swarm", "kubernetes"]`, `orchestrators = [`+list+`]`).Replace(string(spec))
	if !strings.Contains(quick, `repetitions = 1`) || !strings.Contains(quick, `orchestrators = [`+list+`]`) {
		t.Fatalf("the quick spec changed shape; repetitions or orchestrators not found:\n%s", quick)
	}
	// one pass more for a step the busy machine made invalid (a late generator)
	steps := sweepSteps(t, "media-microservices-quick", quick, "--vm", "", "--retry-invalid", "1")
	per := map[string]int{}
	for _, s := range steps {
		per[s.Orchestrator]++
		if s.Outcome != results.OutcomeValid {
			t.Errorf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
		}
		if s.Accounting == nil || s.Accounting.Completed == 0 || s.StatusCodes["200"] != s.Requests {
			t.Errorf("%s: %d requests, statuses %v: want every compose answered 200", s.Step, s.Requests, s.StatusCodes)
		}
	}
	for _, o := range orchestrators {
		if per[o] != 2 {
			t.Errorf("%d steps on %s (%v), want 2", per[o], o, per)
		}
	}
	return steps
}

// mediaLostPlot deploys the baseline on Nomad without its hooks, writes
// the first movie's page (its info, cast and plot: what the probe reads;
// the full load takes 36 s), passes the probe, then deletes the plot from
// mongodb-plot and flushes memcached-plot: the page answers 404, so the
// probe, as the sweep runs it before every load, fails.
func mediaLostPlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const job = "mm-lost-plot"
	vars := []string{"--var", "resource_scale=0.03", "--var", "job_name=" + job}
	must(t, orchbench, append([]string{"pack", "run", "media-microservices", "--wait", "--skip-hooks", "--timeout", "4m"}, vars...)...)
	defer must(t, orchbench, append([]string{"pack", "destroy", "media-microservices"}, vars...)...)

	ad, dep, probe, eps := probedOnNomad(t, ctx, job)
	if g := probe.Check(ctx, eps); g.Passed {
		t.Fatalf("the probe passes a deployment with no data: %s", g.Detail)
	}
	first := dataset.Movies()[0]
	frontend := "http://" + eps[0].HostPort()
	postJSON(t, frontend+"/wrk2-api/plot/write", first.Plot)
	for _, cast := range first.CastInfos {
		postJSON(t, frontend+"/wrk2-api/cast-info/write", cast)
	}
	postJSON(t, frontend+"/wrk2-api/movie-info/write", first.Info)
	if g := probe.Check(ctx, eps); !g.Passed {
		t.Fatalf("the probe fails with the first movie's page written: %s", g.Detail)
	}

	ferret := onlyEndpoint(t, ctx, ad, dep, job+"-mongodb-plot")
	client, err := mongo.Connect(ctx, options.Client().ApplyURI("mongodb://"+ferret+"/"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	plotID := strconv.FormatInt(first.Info.PlotID, 10)
	deleted, err := client.Database("plot").Collection("plot").DeleteOne(ctx, bson.D{{Key: "_id", Value: plotID}})
	if err != nil || deleted.DeletedCount != 1 {
		t.Fatalf("deleting the plot of %s (%s): %v deleted, %v", first.Info.MovieID, plotID, deleted, err)
	}
	testutil.FlushMemcached(t, onlyEndpoint(t, ctx, ad, dep, job+"-memcached-plot"))

	g := probe.Check(ctx, eps)
	t.Logf("probe after losing the plot: passed %v: %s", g.Passed, g.Detail)
	if g.Passed || !strings.Contains(g.Detail, "404") {
		t.Errorf("the probe passed a page without its plot, or failed for another reason: %+v", g)
	}
}

// postJSON posts value as JSON and fails the test unless it is answered
// 200.
func postJSON(t *testing.T, target string, value any) {
	t.Helper()
	body, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(target, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		answer, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", target, resp.StatusCode, answer)
	}
}
