package sweep

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/results"
)

// The prepare hook runs for the jobs that declare one, before anything is
// deployed, and a failure stops the deployment with the hook's problem lines.
func TestRunPrepareHooksRunsDeclaredHooksAndStopsOnFailure(t *testing.T) {
	h := newHookHarness(t)
	r := h.runner()
	jobs := []*api.Job{
		{ID: ptr("sn"), Meta: map[string]string{"orchbench_prepare_args": `["prepare","--image-tag","snap"]`, "orchbench_prepare_timeout": "1m"}},
		{ID: ptr("sn-stores"), Meta: map[string]string{"orchbench_setup_args": `["setup"]`}},
	}
	sr := results.StepResult{Metadata: map[string]any{}}
	if err := r.runPrepareHooks(context.Background(), jobs, &sr); err != nil {
		t.Fatal(err)
	}
	if calls := h.calls(t); strings.Join(calls, ",") != "prepare" {
		t.Errorf("hooks run %q, want only the one prepare hook", calls)
	}
	recs, _ := sr.Metadata["prepare"].([]prepareRecord)
	if len(recs) != 1 || recs[0].Job != "sn" || strings.Join(recs[0].Args, " ") != "prepare --image-tag snap" || recs[0].Seconds <= 0 {
		t.Errorf("recorded %+v", sr.Metadata["prepare"])
	}
	if !strings.Contains(h.out.String(), "prepare of sn: orchbench prepare --image-tag snap") {
		t.Errorf("the hook's run is not shown:\n%s", h.out)
	}

	h.set(t, "prepare-fails", true)
	err := r.runPrepareHooks(context.Background(), jobs, &results.StepResult{Metadata: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "prepare hook (orchbench prepare --image-tag snap) failed") || !strings.Contains(err.Error(), `: 2 problem lines: "home-timeline of user 3 is empty`) {
		t.Errorf("a failing prepare hook: %v", err)
	}

	bad := []*api.Job{{ID: ptr("sn"), Meta: map[string]string{"orchbench_prepare_args": `["prepare","{{endpoint}}"]`}}}
	h.calls(t)
	if err := r.runPrepareHooks(context.Background(), bad, &results.StepResult{Metadata: map[string]any{}}); err == nil || len(h.calls(t)) != 0 {
		t.Errorf("a prepare hook naming an endpoint ran or passed: %v", err)
	}
}
