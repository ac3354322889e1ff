package orchestrator

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
)

// A result written into a job's log comes back whole, and the log without
// the block is the generator's own output, even with a stderr line of the
// generator landing between the block's lines; a log that lost a line, an
// image that writes no block and a job whose generator wrote nothing are
// each told apart.
func TestResultTravelsThroughTheJobLog(t *testing.T) {
	dir := t.TempDir()
	// a tool name gzip cannot shrink, so that the block spans many lines
	noise := make([]byte, 12000)
	rand.NewChaCha8([32]byte{24}).Read(noise)
	want := loadgen.Result{Tool: hex.EncodeToString(noise), Requests: 4321, Series: make([]loadgen.SeriesPoint, 30)}
	raw, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "result.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var block bytes.Buffer
	if err := WriteResultToLog(&block, file); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(block.String(), "\n")
	if len(lines) < 4 {
		t.Fatalf("want a block of several lines to exercise the numbering, got %d", len(lines))
	}
	for _, l := range lines {
		if len(l) > resultLogChunk+64 {
			t.Fatalf("a block line of %d bytes", len(l))
		}
	}
	generator := "run 40 s at 10 rps\n"
	late := "warning: late stderr line\n"
	log := generator + strings.Join(lines[:2], "") + late + strings.Join(lines[2:], "")

	got, rest, err := ResultFromLog([]byte(log), "pod p")
	if err != nil {
		t.Fatal(err)
	}
	if got.Tool != want.Tool || got.Requests != want.Requests || len(got.Series) != len(want.Series) {
		t.Errorf("result %.20s… %d requests %d points, want %.20s… %d %d", got.Tool, got.Requests, len(got.Series), want.Tool, want.Requests, len(want.Series))
	}
	if string(rest) != generator+late {
		t.Errorf("the log without the block: %q", rest)
	}

	lost := generator + lines[0] + strings.Join(lines[2:], "")
	if _, _, err := ResultFromLog([]byte(lost), "pod p"); !errors.Is(err, ErrResultIncomplete) || !strings.Contains(err.Error(), "line 0 of") {
		t.Errorf("a log that lost a line: %v", err)
	}
	if _, rest, err := ResultFromLog([]byte(generator), "pod p"); !errors.Is(err, ErrNoResultInLog) || string(rest) != generator {
		t.Errorf("a log with no block: %v, rest %q", err, rest)
	}

	block.Reset()
	if err := WriteResultToLog(&block, filepath.Join(dir, "absent.json")); err == nil {
		t.Error("a missing result file was not an error")
	}
	if _, _, err := ResultFromLog([]byte(generator+block.String()), "pod p"); err == nil || !strings.Contains(err.Error(), "wrote no result") || errors.Is(err, ErrNoResultInLog) {
		t.Errorf("a job that wrote no result: %v", err)
	}
}
