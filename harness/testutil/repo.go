package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// RepoRoot is the repository's root, found from the test's working
// directory (its package's) upwards as the directory holding go.mod, so a
// test reads packs, jobs and tools from any package's depth.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod in %s or above it", dir)
		}
	}
}
