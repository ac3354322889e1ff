package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// seedingMarker names a seeding cut short (the task killed mid-copy): its
// presence makes the next start seed again instead of taking a half-copied
// directory for data.
const seedingMarker = ".orchbench-seeding"

// seed copies the SQLite files of seedDir into dataDir when dataDir holds
// no database yet, so a dataset-snapshot image starts loaded while a
// restarted task keeps the data it wrote. It reports whether it copied.
func seed(dataDir, seedDir string) (bool, error) {
	marker := filepath.Join(dataDir, seedingMarker)
	_, err := os.Stat(marker)
	interrupted := err == nil
	if !interrupted {
		has, err := hasDatabase(dataDir)
		if err != nil || has {
			return false, err
		}
	}
	entries, err := os.ReadDir(seedDir)
	if err != nil {
		return false, fmt.Errorf("seed dir: %w", err)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return false, err
	}
	if interrupted {
		if err := removeDatabases(dataDir); err != nil {
			return false, err
		}
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(seedDir, e.Name()), filepath.Join(dataDir, e.Name())); err != nil {
			return false, err
		}
	}
	if err := syncDir(dataDir); err != nil {
		return false, err
	}
	return true, os.Remove(marker)
}

// isDatabaseFile matches FerretDB's SQLite files and their WAL companions.
func isDatabaseFile(name string) bool {
	return strings.HasSuffix(name, ".sqlite") || strings.HasSuffix(name, ".sqlite-wal") || strings.HasSuffix(name, ".sqlite-shm")
}

func hasDatabase(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if isDatabaseFile(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

func removeDatabases(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if isDatabaseFile(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
