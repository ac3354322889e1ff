// Package testenv decides what a test does when something it needs (a
// binary, a cgroup, a daemon) is missing. Outside `just test` it skips, so
// `go test ./...` works on a bare checkout. Under `just test`, which
// installs everything first, it fails: a CI run must never go green
// because a test quietly skipped (one did, and hid a broken test).
package testenv

import (
	"os"
	"testing"
)

// StrictVar is set to 1 by the Justfile's test recipes.
const StrictVar = "ORCHBENCH_TEST_STRICT"

// Strict reports whether missing prerequisites are failures.
func Strict() bool { return os.Getenv(StrictVar) == "1" }

// Missing stops the test because a prerequisite is absent: a failure under
// `just test`, a skip elsewhere.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Strict() {
		t.Fatalf("prerequisite missing under `just test` ("+StrictVar+"=1): "+format, args...)
	}
	t.Skipf(format, args...)
}
