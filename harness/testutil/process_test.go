package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcessStopsAndStartsAgainIntoOneLog(t *testing.T) {
	logDir := t.TempDir()
	script := ShellScript(t, "runner", `echo "run $RUN_TAG"; exec sleep 60`)
	p := NewProcess(t, logDir, "runner", []string{"RUN_TAG=e2e"}, script)
	logPath := filepath.Join(logDir, "runner.log")
	waitLog := func(count int) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			data, _ := os.ReadFile(logPath)
			if strings.Count(string(data), "run e2e") >= count {
				return string(data)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the log does not show run %d: %q", count, data)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	p.Start()
	waitLog(1)
	began := time.Now()
	p.Stop(syscall.SIGKILL)
	if took := time.Since(began); took > 4*time.Second {
		t.Errorf("Stop waited %s for a killed process", took)
	}
	p.Stop(syscall.SIGKILL) // stopped already: nothing to do

	p.Start()
	log := waitLog(2)
	if n := strings.Count(log, "--- start "); n != 2 {
		t.Errorf("the log marks %d starts, want 2:\n%s", n, log)
	}
	if !strings.Contains(log, "--- stopped ") {
		t.Errorf("the log does not mark the stop:\n%s", log)
	}
	// The second run is stopped by the test's cleanup.
}
