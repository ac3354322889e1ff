package results

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
)

// A closed loop at saturation: the datastore is the task a request costs
// most, two instances of a service count as one task, and an invalid or a
// skipped repetition, or one whose CPU was not read, changes nothing.
func TestCPUPerRequestNamesTheTaskTheCapacityIs(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	var steps []StepResult
	add := func(rep int, rps float64, outcome Outcome, tasks []TaskCPU) {
		st := experiment.Step{ID: experiment.StepID("sn", "nomad", "unlimited", 0, 16, rep), App: "sn", Orchestrator: "nomad", Variant: "unlimited", Users: 16, Rep: rep}
		r := fakeResult("s", st, start)
		r.Outcome, r.AchievedRPS = outcome, rps
		if tasks != nil {
			r.Metadata["task_cpu"] = tasks
		}
		b, _ := json.Marshal(r.Metadata) // as read back from the archive
		r.Metadata = nil
		if err := json.Unmarshal(b, &r.Metadata); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, r)
	}
	for rep, rps := range []float64{200, 250, 300} {
		add(rep+1, rps, OutcomeValid, []TaskCPU{
			{Task: "ferretdb", Cores: rps * 0.006, Datastore: true},
			{Task: "user-timeline", AllocID: "a", Cores: rps * 0.0005},
			{Task: "user-timeline", AllocID: "b", Cores: rps * 0.0005},
			{Task: "frontend", Cores: rps * 0.002},
		})
	}
	add(4, 900, OutcomeInvalid, []TaskCPU{{Task: "ferretdb", Cores: 0.1, Datastore: true}})
	add(5, 0, OutcomeBroken, []TaskCPU{{Task: "ferretdb", Cores: 1, Datastore: true}})
	add(6, 250, OutcomeValid, nil)

	got := CPUPerRequest(steps)
	if len(got) != 1 {
		t.Fatalf("%d groups, want 1: %+v", len(got), got)
	}
	r := got[0]
	if r.Steps != 3 || r.AchievedRPS != 250 || r.Level != "u16" {
		t.Errorf("over %d steps at %.0f rps (%s), want 3 at 250 (u16)", r.Steps, r.AchievedRPS, r.Level)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if b := r.Busiest(); b.Task != "ferretdb" || !b.Datastore || !near(b.MillisPerRequest, 6) || !near(b.ShareOfBusy, 6.0/9) {
		t.Errorf("busiest %+v, want ferretdb at 6 ms per request, 2/3 of the busy CPU", b)
	}
	if ut := r.Tasks[2]; ut.Task != "user-timeline" || !near(ut.MillisPerRequest, 1) {
		t.Errorf("third %+v, want user-timeline's two instances summed to 1 ms", ut)
	}
	all, ds := r.MillisPerRequest()
	if !near(all, 9) || !near(ds, 6) || !near(r.DatastoreCores, 1.5) {
		t.Errorf("per request %.3f ms (datastores %.3f), datastore cores %.3f; want 9, 6, 1.5", all, ds, r.DatastoreCores)
	}
}

func TestFormatRequestCPU(t *testing.T) {
	var b strings.Builder
	rows := []RequestCPU{{Configuration: "sn-nomad-unlimited", Level: "u16", Steps: 3, AchievedRPS: 249, BusyCores: 1.6, DatastoreCores: 1.03,
		Tasks: []TaskRequestCPU{{Task: "ferretdb", Datastore: true, Cores: 1.03, MillisPerRequest: 4.14, ShareOfBusy: 0.64}, {Task: "frontend", Cores: 0.1, MillisPerRequest: 0.4, ShareOfBusy: 0.06}, {Task: "unique-id", Cores: 0.0001, MillisPerRequest: 0.002}}}}
	if err := FormatRequestCPU(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"sn-nomad-unlimited at u16: 249 rps over 3 repetition(s)", "4.54 ms CPU per request (datastores 4.14)", "busiest ferretdb at 64 %", "ferretdb (datastore)", "4.140", "and 1 task(s) under 0.01 ms per request"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unique-id") {
		t.Errorf("a task the workload does not call is listed:\n%s", out)
	}
}
