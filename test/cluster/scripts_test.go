// Package cluster tests the shell scripts under cluster/ that can run
// without a cluster: they are called as `just` and the other scripts call
// them, with fixtures standing in for the machine's settings.
package cluster

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/orchbench/orchbench/harness/testenv"
)

// repoRoot is the checkout this test runs in (the package is test/cluster).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// result is what one run of a script printed and how it ended.
type result struct {
	stdout, stderr string
	err            error
}

// runScript runs cluster/NAME with ARGS under bash, its environment the
// test's own with ENV ("KEY=value") on top.
func runScript(t *testing.T, env []string, name string, args ...string) result {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		testenv.Missing(t, "no bash on PATH")
	}
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "cluster", name)}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return result{stdout: out.String(), stderr: errOut.String(), err: err}
}

// writeFile writes BODY to DIR/NAME with MODE, making DIR first.
func writeFile(t *testing.T, dir, name, body string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return p
}
