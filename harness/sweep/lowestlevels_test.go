package sweep

import (
	"testing"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/results"
)

func TestLowestLevels(t *testing.T) {
	step := func(rate float64, rep int) experiment.Step {
		return experiment.Step{ID: experiment.StepID("a", "nomad", "v", rate, 0, rep), App: "a", Orchestrator: "nomad", Variant: "v", OfferedRPS: rate, Rep: rep}
	}
	measured := func(body int64, gs ...results.Gate) results.StepResult {
		return results.StepResult{Outcome: results.OutcomeValid, Gates: gs, Endpoints: []results.EndpointStats{{Name: "GET /", Completed: 10, BodyBytes: 10 * body}}}
	}
	l := lowestLevels{}
	if l.below(step(200, 1)) != nil {
		t.Fatal("nothing measured yet")
	}
	l.record(step(400, 1), measured(400))
	if l.below(step(200, 1)) != nil {
		t.Fatal("a higher level is no reference")
	}
	l.record(step(200, 1), measured(200))
	l.record(step(300, 1), measured(300))
	if got := l.below(step(400, 1)); got == nil || got.Step != "a-nomad-v-r200-rep1" {
		t.Fatalf("the lowest level below r400 = %+v, want r200", got)
	}
	if l.below(step(200, 1)) != nil || l.below(step(400, 2)) != nil {
		t.Fatal("a level is not its own reference, nor another repetition's")
	}
	// a lower level that was invalid or whose bodies shrank is no reference
	l.record(step(100, 1), results.StepResult{Outcome: results.OutcomeInvalid, Endpoints: measured(100).Endpoints})
	shrank := measured(100, results.Gate{Name: gates.Responses, Breaks: true})
	shrank.Outcome = results.OutcomeBroken
	l.record(step(100, 1), shrank)
	if got := l.below(step(400, 1)); got.Step != "a-nomad-v-r200-rep1" {
		t.Fatalf("reference = %s", got.Step)
	}
}
