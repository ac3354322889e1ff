package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/hooks"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/testutil"
)

// endpointsOnly is an orchestrator whose measured service has one
// instance; the hooks ask it nothing else.
type endpointsOnly struct {
	orchestrator.Orchestrator
	ep orchestrator.Endpoint
}

func (e endpointsOnly) Endpoints(context.Context, *orchestrator.Deployment, string) ([]orchestrator.Endpoint, error) {
	return []orchestrator.Endpoint{e.ep}, nil
}

// fakeHookBinary stands in for orchbench: it logs each call and fails a
// verification with two problem lines when a file "verify-fails" exists.
const fakeHookBinary = `dir=$(dirname "$0")
echo "$*" >> "$dir/calls"
if [ "$1" = verify ] && [ -f "$dir/verify-fails" ]; then
  echo "problem: home-timeline of user 3 is empty"
  echo "problem: user-timeline of user 3 is empty"
  echo "2 problems" >&2
  exit 1
fi
echo "$1 done"
`

func TestPackRunHooksReportProblemLinesAndTime(t *testing.T) {
	bin := testutil.ShellScript(t, "orchbench", fakeHookBinary)
	dir := filepath.Dir(bin)
	app, err := contract.ParseApp(&api.Job{ID: ptr("sn"), Meta: map[string]string{
		"orchbench_service":     "sn-frontend",
		"orchbench_setup_args":  `["setup","--frontend","http://{{endpoint}}"]`,
		"orchbench_verify_args": `["verify","--frontend","http://{{endpoint}}"]`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	o := endpointsOnly{ep: orchestrator.Endpoint{Service: "sn-frontend", Address: "127.0.0.1", Port: 31000}}
	var out strings.Builder
	hr := hooks.Runner{Binary: bin, Out: &out}
	calls := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "calls"))
		os.Remove(filepath.Join(dir, "calls"))
		return strings.TrimSpace(string(b))
	}

	fresh := &orchestrator.Deployment{Job: "sn", Fresh: true, App: app}
	if err := runSetupAndVerify(context.Background(), hr, o, []*orchestrator.Deployment{fresh}); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got != "setup --frontend http://127.0.0.1:31000\nverify --frontend http://127.0.0.1:31000" {
		t.Errorf("hooks run on a fresh deployment:\n%s", got)
	}
	for _, want := range []string{"setup of sn: orchbench setup --frontend http://127.0.0.1:31000\n  setup: setup done\nsetup of sn finished in ", "verify of sn finished in "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	if err := os.WriteFile(filepath.Join(dir, "verify-fails"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	reused := &orchestrator.Deployment{Job: "sn", App: app}
	err = runSetupAndVerify(context.Background(), hr, o, []*orchestrator.Deployment{reused})
	if got := calls(); got != "verify --frontend http://127.0.0.1:31000" {
		t.Errorf("hooks run on a reused deployment:\n%s", got)
	}
	if err == nil {
		t.Fatal("a failed verification passed")
	}
	for _, want := range []string{"job sn: verification (orchbench verify --frontend http://127.0.0.1:31000) failed after ",
		`2 problem lines: "home-timeline of user 3 is empty"; "user-timeline of user 3 is empty"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the failure lacks %q: %v", want, err)
		}
	}
}

func TestPackRunPrepareHookFailureNamesTheJob(t *testing.T) {
	bin := testutil.ShellScript(t, "orchbench", "echo 'problem: no space left for the snapshot'\nexit 2")
	jobs := []*api.Job{{ID: ptr("sn"), Meta: map[string]string{"orchbench_prepare_args": `["prepare"]`}}}
	err := runPrepareHooks(context.Background(), hooks.Runner{Binary: bin, Out: &strings.Builder{}}, jobs)
	if err == nil || !strings.HasPrefix(err.Error(), "job sn: prepare hook (orchbench prepare) failed after ") ||
		!strings.HasSuffix(err.Error(), `exit status 2: 1 problem line: "no space left for the snapshot"`) {
		t.Errorf("a failing prepare hook: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
