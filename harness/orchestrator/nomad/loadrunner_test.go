package nomad

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

func TestShipScriptMovesTheScriptIntoThePayload(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "forward.lua")
	if err := os.WriteFile(script, []byte(`function setup(thread) thread.addr = "127.0.0.1:9" end`), 0o644); err != nil {
		t.Fatal(err)
	}
	args, payload, err := orchestrator.ShipScript([]string{"-t", "1", "-s", script, "-R", "10"}, scriptInJob)
	if err != nil || strings.Join(args, " ") != "-t 1 -s "+scriptInJob+" -R 10" || !strings.Contains(string(payload), "thread.addr") {
		t.Fatalf("args %q payload %q err %v", args, payload, err)
	}
	if args, payload, err := orchestrator.ShipScript([]string{"-t", "1"}, scriptInJob); err != nil || payload != nil || len(args) != 2 {
		t.Fatalf("no script: %q %q %v", args, payload, err)
	}
	if _, _, err := orchestrator.ShipScript([]string{"-s", filepath.Join(dir, "missing.lua")}, scriptInJob); err == nil || !strings.Contains(err.Error(), "missing.lua") {
		t.Fatalf("a missing script must be named: %v", err)
	}
}
