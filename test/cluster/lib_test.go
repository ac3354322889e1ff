package cluster

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/orchbench/orchbench/harness/testenv"
)

// inBash runs SCRIPT with cluster/lib.sh sourced, under the options every
// cluster script sets, and returns its exit code.
func inBash(t *testing.T, script string) int {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		testenv.Missing(t, "no bash on PATH")
	}
	lib := filepath.Join(repoRoot(t), "cluster", "lib.sh")
	err := exec.Command("bash", "-c", "set -euo pipefail; say() { :; }; source \"$1\"; "+script, "bash", lib).Run()
	if err == nil {
		return 0
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	t.Fatalf("bash: %v", err)
	return -1
}

// A long output whose first line matches: piped into grep -q, the writer
// dies of SIGPIPE once grep has left, and pipefail fails the pipeline;
// output_has reads it whole and answers true.
func TestOutputHasMatchesWhereGrepQFailsUnderPipefail(t *testing.T) {
	// about 7 MB, far past a pipe's buffer, so the writer is still writing
	const long = "seq 1 1000000"
	if code := inBash(t, long+" | grep -q '^1$'"); code == 0 {
		t.Fatalf("the pipeline passed: this test's premise (SIGPIPE under pipefail) does not hold here")
	}
	if code := inBash(t, "output_has '^1$' "+long); code != 0 {
		t.Errorf("output_has '^1$' %s: exit %d, want 0", long, code)
	}
}

func TestOutputHas(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         int
	}{
		{"a line matches", `output_has '^Status *= ready' printf 'ID = 1\nStatus    = ready\n'`, 0},
		{"an extended expression", `output_has 'Memory (Over)+subscription *= true' echo 'Memory Oversubscription = true'`, 0},
		{"a pattern starting with a dash", `output_has '-tags=ui$' echo 'build -tags=ui'`, 0},
		{"no line matches", `output_has '^Status *= ready' echo 'Status = initializing'`, 1},
		{"the command failed, whatever it printed", `output_has OK sh -c 'echo OK; exit 3'`, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := inBash(t, c.script); got != c.want {
				t.Errorf("%s: exit %d, want %d", c.script, got, c.want)
			}
		})
	}
}
