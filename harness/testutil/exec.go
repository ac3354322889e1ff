package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// ShellScript writes an executable /bin/sh script named name into a
// directory of its own and returns its path: a stand-in for a binary the
// code under test runs (orchbench for a hook, a load tool).
func ShellScript(t testing.TB, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
