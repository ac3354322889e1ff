package hooks

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/testutil"
)

func TestRunStreamsPrefixedOutputAndKeepsTimeLastLineAndProblems(t *testing.T) {
	// a problem line may be indented, and the last line may lack its newline
	bin := testutil.ShellScript(t, "orchbench", `echo "checking $2"
echo "  problem:  user 3 has no timeline "
echo "problem: user 4 has no timeline" >&2
echo "problems are only lines that start so: problem: not this"
sleep 0.2
printf '2 problems, checked 4 users'
`)
	var out strings.Builder
	res, err := Runner{Binary: bin, Out: &out}.Run(context.Background(), Call{Kind: Verify, Job: "sn", Args: []string{"verify", "--frontend", "x"}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := []Problem{"user 3 has no timeline", "user 4 has no timeline"}
	if !reflect.DeepEqual(res.Problems, want) {
		t.Errorf("problems %q, want %q", res.Problems, want)
	}
	if res.Last != "2 problems, checked 4 users" {
		t.Errorf("last line %q", res.Last)
	}
	if res.Took < 200*time.Millisecond || res.Took > 10*time.Second {
		t.Errorf("took %s for a hook that slept 0.2 s", res.Took)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 7 || lines[0] != "verify of sn: orchbench verify --frontend x" || lines[1] != "  verify: checking --frontend" ||
		lines[5] != "  verify: 2 problems, checked 4 users" || !strings.HasPrefix(lines[6], "verify of sn finished in ") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestRunFailureCarriesProblemLinesOrTheLastLine(t *testing.T) {
	bin := testutil.ShellScript(t, "orchbench", `i=0
while [ $i -lt "$2" ]; do i=$((i+1)); echo "problem: record $i missing"; done
echo "gave up" >&2
exit 3
`)
	run := func(problems int) (Result, error) {
		return Runner{Binary: bin, Out: &strings.Builder{}}.Run(context.Background(), Call{Kind: Verify, Job: "sn", Args: []string{"verify", fmt.Sprint(problems)}, Timeout: time.Minute})
	}

	res, err := run(5)
	var f *Failure
	if !errors.As(err, &f) || len(res.Problems) != 5 || f.Result.Took != res.Took {
		t.Fatalf("a failing hook: %v (%T), %d problems", err, err, len(res.Problems))
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("the exit status is not underneath: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"verification (orchbench verify 5) failed after ", "exit status 3", `5 problem lines: "record 1 missing"; "record 2 missing"; "record 3 missing" and 2 more`} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}

	_, err = run(0)
	if err == nil || !strings.HasSuffix(err.Error(), "exit status 3: gave up") || strings.Contains(err.Error(), "problem lines") {
		t.Errorf("a failure with no problem lines should end in the last line: %v", err)
	}
}

func TestRunKeepsABoundedNumberOfProblems(t *testing.T) {
	bin := testutil.ShellScript(t, "orchbench", `i=0
while [ $i -lt 1200 ]; do i=$((i+1)); echo "problem: record $i missing"; done
`)
	res, err := Runner{Binary: bin, Out: &strings.Builder{}}.Run(context.Background(), Call{Kind: Verify, Job: "sn", Args: []string{"verify"}, Timeout: time.Minute})
	if err != nil || len(res.Problems) != maxProblems || res.Problems[0] != "record 1 missing" || res.Last != "problem: record 1200 missing" {
		t.Errorf("%d problems kept (first %q), last %q, error %v", len(res.Problems), res.Problems[:min(len(res.Problems), 1)], res.Last, err)
	}
}

func TestRunSaysWhenTheHookOutlivedItsTimeout(t *testing.T) {
	bin := testutil.ShellScript(t, "orchbench", "echo loading\nexec sleep 30\n")
	var out strings.Builder
	res, err := Runner{Binary: bin, Out: &out}.Run(context.Background(), Call{Kind: Setup, Job: "sn", Args: []string{"setup"}, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "setup (orchbench setup) failed after ") ||
		!strings.Contains(err.Error(), "not finished within its timeout of 300ms") || !strings.HasSuffix(err.Error(), ": loading") {
		t.Errorf("a hook killed at its timeout: %v", err)
	}
	if res.Took > 5*time.Second || strings.Contains(out.String(), "finished") {
		t.Errorf("took %s; output:\n%s", res.Took, out.String())
	}

	// the caller's own cancellation is not the hook's timeout
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Runner{Binary: bin, Out: &strings.Builder{}}.Run(ctx, Call{Kind: Setup, Job: "sn", Args: []string{"setup"}, Timeout: time.Minute})
	if err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("an interrupted hook: %v", err)
	}
}

func TestRunWithoutABinaryFails(t *testing.T) {
	_, err := Runner{Binary: filepath.Join(t.TempDir(), "none"), Out: &strings.Builder{}}.Run(context.Background(), Call{Kind: Prepare, Job: "sn", Args: []string{"prepare"}, Timeout: time.Minute})
	var f *Failure
	if !errors.As(err, &f) || !strings.HasPrefix(err.Error(), "prepare hook (orchbench prepare) failed") {
		t.Errorf("a missing binary: %v", err)
	}
}

func TestCallsFillTheEndpointAndItsNamespace(t *testing.T) {
	hook := contract.Hook{Args: []string{"setup", "--frontend", "http://{{endpoint}}/"}, Timeout: time.Hour}
	ep := orchestrator.Endpoint{Address: "10.0.0.7", Port: 8080, NetNS: "/run/netns/orchbench-k8s"}
	got := At(Setup, "sn", hook, ep)
	want := Call{Kind: Setup, Job: "sn", NetNS: ep.NetNS, Args: []string{"setup", "--frontend", "http://10.0.0.7:8080/"}, Timeout: time.Hour}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("At: %+v, want %+v", got, want)
	}
	if hook.Args[2] != "http://{{endpoint}}/" {
		t.Error("At changed the pack's hook")
	}

	jobs := []*api.Job{
		{ID: ptr("sn"), Meta: map[string]string{"orchbench_prepare_args": `["prepare","--image-tag","snap"]`, "orchbench_prepare_timeout": "1m"}},
		{ID: ptr("sn-stores"), Meta: map[string]string{"orchbench_setup_args": `["setup"]`}},
	}
	calls, err := PrepareCalls(jobs)
	want = Call{Kind: Prepare, Job: "sn", Args: []string{"prepare", "--image-tag", "snap"}, Timeout: time.Minute}
	if err != nil || len(calls) != 1 || !reflect.DeepEqual(calls[0], want) {
		t.Errorf("prepare calls %+v, %v; want only %+v", calls, err, want)
	}
	jobs = append(jobs, &api.Job{ID: ptr("bad"), Meta: map[string]string{"orchbench_prepare_args": `["prepare","{{endpoint}}"]`}})
	if calls, err := PrepareCalls(jobs); err == nil || calls != nil {
		t.Errorf("a job whose prepare hook names an endpoint: %+v, %v", calls, err)
	}
}

func ptr[T any](v T) *T { return &v }

// A runner's Env replaces the hook's environment: a prepare hook on the
// nodes builds on the project's dockerd, not on the sweep's DOCKER_HOST.
func TestRunGivesTheHookTheRunnersEnvironment(t *testing.T) {
	bin := testutil.ShellScript(t, "orchbench", `echo "docker at ${DOCKER_HOST:-the local socket}"`)
	t.Setenv("DOCKER_HOST", "tcp://10.77.0.11:2375")
	var out strings.Builder
	res, err := Runner{Binary: bin, Out: &out, Env: []string{"PATH=/usr/bin:/bin"}}.Run(context.Background(), Call{Kind: Prepare, Job: "sn", Args: []string{"dsb"}, Timeout: time.Minute})
	if err != nil || res.Last != "docker at the local socket" {
		t.Errorf("with Env: %q, %v", res.Last, err)
	}
	res, err = Runner{Binary: bin, Out: &out}.Run(context.Background(), Call{Kind: Prepare, Job: "sn", Args: []string{"dsb"}, Timeout: time.Minute})
	if err != nil || res.Last != "docker at tcp://10.77.0.11:2375" {
		t.Errorf("without Env (inherited): %q, %v", res.Last, err)
	}
}
