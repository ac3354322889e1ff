package gctune

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestReadCgroupLimit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text  string
		limit int64
		ok    bool
	}{
		{"1073741824\n", 1 << 30, true},
		{"max\n", 0, false},
		{"", 0, false},
		{"9223372036854771712\n", 0, false}, // cgroup v1's "no limit"
	} {
		path := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if limit, ok := readCgroupLimit(path); limit != c.limit || ok != c.ok {
			t.Errorf("memory.max %q: %d, %v; want %d, %v", c.text, limit, ok, c.limit, c.ok)
		}
	}
	if _, ok := readCgroupLimit(filepath.Join(dir, "missing")); ok {
		t.Error("a missing memory.max gave a limit")
	}
}

func TestApplySetsASoftLimitBelowTheCgroupsUnlessGOMEMLIMITIsSet(t *testing.T) {
	previousPercent := debug.SetGCPercent(100)
	previousLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(previousPercent); debug.SetMemoryLimit(previousLimit) })
	path := filepath.Join(t.TempDir(), "memory.max")
	if err := os.WriteFile(path, []byte("1000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if soft := Apply([]string{filepath.Join(t.TempDir(), "missing"), path}); soft != 750000 || debug.SetMemoryLimit(-1) != 750000 {
		t.Fatalf("soft limit %d, want 3/4 of the cgroup's 1000000", soft)
	}
	if percent := debug.SetGCPercent(100); percent != DefaultGCPercent {
		t.Fatalf("GC percent %d, want %d", percent, DefaultGCPercent)
	}

	debug.SetMemoryLimit(previousLimit)
	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "2GiB")
	if soft := Apply([]string{filepath.Join(t.TempDir(), "missing"), path}); soft != 0 {
		t.Fatalf("with GOMEMLIMIT set, Apply set a limit of %d", soft)
	}
	if percent := debug.SetGCPercent(100); percent != 100 {
		t.Fatalf("with GOGC set, Apply changed the GC percent to %d", percent)
	}
}
