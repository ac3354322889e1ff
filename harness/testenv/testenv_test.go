package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The helper is run in a child test process, once strict and once not, and
// the child's verdict is read from its output.
func TestMissingFailsOnlyWhenStrict(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Missing(t, "no widget at %s", "/dev/widget")
		return
	}
	for strict, want := range map[string]string{"1": "--- FAIL", "0": "--- SKIP"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingFailsOnlyWhenStrict$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", StrictVar+"="+strict)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "no widget at /dev/widget") {
			t.Errorf("%s=%s: want %s naming the widget, got:\n%s", StrictVar, strict, want, out)
		}
	}
}
