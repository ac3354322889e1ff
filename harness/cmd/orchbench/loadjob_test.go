package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// With --result-to-log the job's own output carries the result the
// generator wrote to its file, as the harness reads it from a pod's log;
// without it the output is the generator's alone.
func TestLoadjobWritesTheResultIntoItsLog(t *testing.T) {
	srv, hits := slowCounted(t)
	args, _ := json.Marshal([]string{"-t1", "-c1", "-d1s", "-R10", srv.URL})
	env := []string{orchestrator.EnvLoadArgs + "=" + string(args)}

	file := filepath.Join(t.TempDir(), "result.json")
	cmd, out := startChild(t, hits, env, "loadjob", "--out", file, "--result-to-log")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("loadjob: %v\n%s", err, out.String())
	}
	fromLog, rest, err := orchestrator.ResultFromLog(out.Bytes(), "loadjob")
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile loadgen.Result
	if err := json.Unmarshal(data, &fromFile); err != nil {
		t.Fatal(err)
	}
	if fromLog.Accounting != fromFile.Accounting || fromLog.Requests == 0 {
		t.Errorf("the log's result %s, the file's %s", fromLog.Accounting, fromFile.Accounting)
	}
	if strings.Contains(string(rest), "orchbench-load-result") {
		t.Errorf("the generator's output kept the block:\n%s", rest)
	}

	plain := filepath.Join(t.TempDir(), "result.json")
	cmd, out = startChild(t, hits, env, "loadjob", "--out", plain)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("loadjob: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "orchbench-load-result") {
		t.Errorf("a job without --result-to-log wrote the block:\n%s", out.String())
	}
}
