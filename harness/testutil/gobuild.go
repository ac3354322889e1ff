package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// GoBuilds builds the repository's commands into one directory, each once
// for every test of a package that runs them as processes (the
// DeathStarBench ports' end-to-end tests).
type GoBuilds struct {
	dir    string
	builds sync.Map // package path -> *sync.Once
}

// NewGoBuilds makes the directory for a TestMain; Remove it when m.Run
// returns.
func NewGoBuilds(prefix string) (*GoBuilds, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	return &GoBuilds{dir: dir}, nil
}

// Remove deletes the binaries.
func (b *GoBuilds) Remove() { os.RemoveAll(b.dir) }

// Build returns the static binary of pkg (a path from the repository's
// root), building it the first time.
func (b *GoBuilds) Build(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(b.dir, filepath.Base(pkg))
	once, _ := b.builds.LoadOrStore(pkg, &sync.Once{})
	var buildErr error
	once.(*sync.Once).Do(func() {
		cmd := exec.Command("go", "build", "-o", out, "./"+pkg)
		cmd.Dir = RepoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if output, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build %s: %v\n%s", pkg, err, output)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("%s was not built (an earlier build failed): %v", pkg, err)
	}
	return out
}

// Tail is the last n bytes of s, for a process log shown on failure.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
