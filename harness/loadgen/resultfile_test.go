package loadgen

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadResultFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	want := Result{Schema: ResultSchema, Tool: "orchbench-loadgen", Requests: 42, StatusCodes: map[int]int64{200: 41, 503: 1}}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResultFile(path)
	if err != nil || got.Tool != want.Tool || got.Requests != 42 || got.StatusCodes[503] != 1 {
		t.Fatalf("read back %+v, %v", got, err)
	}

	if _, err := ReadResultFile(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadResultFile(path); err == nil || !strings.Contains(err.Error(), "load result "+path) {
		t.Errorf("a truncated result (a generator killed while writing): %v", err)
	}
}
