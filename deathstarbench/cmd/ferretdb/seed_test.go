package main

import (
	"os"
	"path/filepath"
	"testing"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSeedFillsOnlyAnEmptyDataDir(t *testing.T) {
	seedDir, dataDir := t.TempDir(), t.TempDir()
	writeFiles(t, seedDir, map[string]string{"post.sqlite": "seeded posts", "user.sqlite": "seeded users"})

	seeded, err := seed(dataDir, seedDir)
	if err != nil || !seeded {
		t.Fatalf("an empty data dir: seeded %v, %v", seeded, err)
	}
	if got := readFile(t, filepath.Join(dataDir, "user.sqlite")); got != "seeded users" {
		t.Errorf("user.sqlite holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(dataDir, seedingMarker)); !os.IsNotExist(err) {
		t.Errorf("the marker outlived a finished seeding: %v", err)
	}

	// a restarted task: what it wrote since must survive
	writeFiles(t, dataDir, map[string]string{"post.sqlite": "written after the start"})
	if seeded, err := seed(dataDir, seedDir); err != nil || seeded {
		t.Fatalf("a data dir with a database: seeded %v, %v", seeded, err)
	}
	if got := readFile(t, filepath.Join(dataDir, "post.sqlite")); got != "written after the start" {
		t.Errorf("seeding overwrote the task's data: %q", got)
	}
}

func TestSeedRedoesAnInterruptedSeeding(t *testing.T) {
	seedDir, dataDir := t.TempDir(), t.TempDir()
	writeFiles(t, seedDir, map[string]string{"post.sqlite": "seeded posts", "user.sqlite": "seeded users"})
	// killed after one file: a database exists, but so does the marker
	writeFiles(t, dataDir, map[string]string{"post.sqlite": "seeded po", "media.sqlite-wal": "stale", seedingMarker: ""})

	if seeded, err := seed(dataDir, seedDir); err != nil || !seeded {
		t.Fatalf("seeded %v, %v", seeded, err)
	}
	if got := readFile(t, filepath.Join(dataDir, "post.sqlite")); got != "seeded posts" {
		t.Errorf("post.sqlite holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "media.sqlite-wal")); !os.IsNotExist(err) {
		t.Errorf("a file of the cut-short seeding survived: %v", err)
	}
}
