//go:build integration

package integration

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/sweep"
	"github.com/orchbench/orchbench/harness/testutil"
)

// TestHotelReservation runs experiments/hotel-reservation-quick.hcl (the
// hotel reservation's baseline under the original's mixed workload, one
// repetition of two rates) on Nomad and Swarm: every step valid, every
// task under the same CPU policy on both (TestKubernetes runs it on Kubernetes while its cluster is up, saving
// this test a bring-up of its own). Then the horizontal variant (two of
// each service, one of each datastore) on Nomad answers responses of the
// same mean size as the baseline did; and a deployment whose hotel
// profiles are emptied behind its back fails the pack's probe through the
// sweep's own probe gate, where the same deployment passed it before.
func TestHotelReservation(t *testing.T) {
	started := time.Now()
	steps, quick := hotelQuickSweep(t, "nomad", "swarm")
	t.Logf("quick sweep on Nomad and Swarm: %s", time.Since(started).Round(time.Second))
	// the 17 tasks weigh against each other alike on both (Swarm's adapter
	// sets what its service API cannot), and none may swap
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
	if policies < 17 {
		t.Errorf("parity compared the CPU policy of %d tasks, want the pack's 17", policies)
	}

	// horizontal, on Nomad: the same workload answered alike by two
	// instances of each service sharing one store per service
	horizontal := strings.NewReplacer(`sweep "hotel-reservation-quick"`, `sweep "hotel-reservation-horizontal"`,
		`orchestrators = ["nomad", "swarm"]`, `orchestrators = ["nomad"]`,
		`variants = ["baseline"]`, `variants = ["horizontal"]`).Replace(quick)
	if !strings.Contains(horizontal, `variants = ["horizontal"]`) || !strings.Contains(horizontal, `orchestrators = ["nomad"]`) {
		t.Fatalf("the quick spec changed shape; the horizontal form did not apply:\n%s", horizontal)
	}
	hsteps := sweepSteps(t, "hotel-reservation-horizontal", horizontal, "--vm", "")
	for _, s := range hsteps {
		if s.Outcome != results.OutcomeValid || s.Variant != "horizontal" {
			t.Errorf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
		}
	}
	base, horiz := meanResponse(steps), meanResponse(hsteps)
	t.Logf("mean response: baseline %.0f bytes, horizontal %.0f bytes", base, horiz)
	if base <= 0 || math.Abs(horiz-base) > 0.2*base {
		t.Errorf("horizontal's mean response (%.0f bytes) is not within 20 %% of baseline's (%.0f bytes)", horiz, base)
	}

	t.Run("emptied-profiles-fail-the-probe", hotelEmptiedProfiles)
	t.Logf("hotel reservation: %s in all", time.Since(started).Round(time.Second))
}

// hotelQuickSweep runs experiments/hotel-reservation-quick.hcl on the
// given orchestrators at one repetition (the spec has two: CI's time is
// bounded, and what this guards, every step valid on each orchestrator,
// needs no interval), and returns its steps and the spec it ran.
func hotelQuickSweep(t *testing.T, orchestrators ...string) ([]results.StepResult, string) {
	t.Helper()
	spec, err := os.ReadFile(filepath.Join(root, "experiments", "hotel-reservation-quick.hcl"))
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
	steps := sweepSteps(t, "hotel-reservation-quick", quick, "--vm", "", "--retry-invalid", "1")
	per := map[string]int{}
	for _, s := range steps {
		per[s.Orchestrator]++
		if s.Outcome != results.OutcomeValid {
			t.Errorf("%s: %s %v", s.Step, s.Outcome, s.Reasons)
		}
		if s.Accounting == nil || s.Accounting.Completed == 0 {
			t.Errorf("%s: no request completed", s.Step)
		}
	}
	for _, o := range orchestrators {
		if per[o] != 2 {
			t.Errorf("%d steps on %s (%v), want 2", per[o], o, per)
		}
	}
	if len(steps) != 2*len(orchestrators) {
		t.Fatalf("%d steps (%v), want 2 on each of %v", len(steps), per, orchestrators)
	}
	return steps, quick
}

// meanResponse is bytes per response over every step: what the
// orchestrator parity compares per endpoint, for the whole mix.
func meanResponse(steps []results.StepResult) float64 {
	var bytes, requests int64
	for _, s := range steps {
		bytes += s.Bytes
		requests += s.Requests
	}
	if requests == 0 {
		return 0
	}
	return float64(bytes) / float64(requests)
}

// hotelEmptiedProfiles deploys the baseline on Nomad, passes the pack's
// probe, then deletes the hotel profiles from ferretdb-profile and flushes
// memcached-profile: /hotels answers an empty FeatureCollection, and the
// probe, as the sweep runs it before every load, fails.
func hotelEmptiedProfiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const job = "hr-emptied"
	vars := []string{"--var", "resource_scale=0.03", "--var", "job_name=" + job}
	must(t, orchbench, append([]string{"pack", "run", "hotel-reservation", "--wait"}, vars...)...)
	defer must(t, orchbench, append([]string{"pack", "destroy", "hotel-reservation"}, vars...)...)

	ad, dep, probe, eps := probedOnNomad(t, ctx, job)
	if g := probe.Check(ctx, eps); !g.Passed {
		t.Fatalf("the probe fails on the fresh deployment: %s", g.Detail)
	}

	ferret := onlyEndpoint(t, ctx, ad, dep, job+"-ferretdb-profile")
	client, err := mongo.Connect(ctx, options.Client().ApplyURI("mongodb://"+ferret+"/"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	deleted, err := client.Database("profile-db").Collection("hotels").DeleteMany(ctx, bson.D{})
	if err != nil || deleted.DeletedCount != 80 {
		t.Fatalf("deleting the 80 hotel profiles: %v deleted, %v", deleted, err)
	}
	testutil.FlushMemcached(t, onlyEndpoint(t, ctx, ad, dep, job+"-memcached-profile"))

	g := probe.Check(ctx, eps)
	t.Logf("probe after emptying: passed %v: %s", g.Passed, g.Detail)
	if g.Passed || !strings.Contains(g.Detail, "want at least 300 (dataset not loaded?)") {
		t.Errorf("the probe passed an emptied deployment, or failed for another reason: %+v", g)
	}
}

func onlyEndpoint(t *testing.T, ctx context.Context, ad *nomad.Orchestrator, dep *orchestrator.Deployment, service string) string {
	t.Helper()
	eps, err := ad.Endpoints(ctx, dep, service)
	if err != nil || len(eps) != 1 {
		t.Fatalf("%s: %v, %v; want one instance", service, eps, err)
	}
	return eps[0].HostPort()
}

// probedOnNomad reads Nomad job's deployment, the pack's probe as the
// sweep runs it, and the measured service's endpoints.
func probedOnNomad(t *testing.T, ctx context.Context, job string) (*nomad.Orchestrator, *orchestrator.Deployment, sweep.Probe, []orchestrator.Endpoint) {
	t.Helper()
	ad, err := nomad.New("", "")
	if err != nil {
		t.Fatal(err)
	}
	dep := deploymentOf(t, ad, job)
	info, _, err := ad.Client.Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	app, err := contract.ParseApp(info)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := app.RequireProbe()
	if err != nil {
		t.Fatal(err)
	}
	eps, err := ad.Endpoints(ctx, dep, app.Service)
	if err != nil || len(eps) == 0 {
		t.Fatalf("endpoints of %s: %v %v", app.Service, eps, err)
	}
	return ad, dep, sweep.Probe(rule), eps
}
