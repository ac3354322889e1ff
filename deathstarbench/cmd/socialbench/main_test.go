package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestParseFlagsReadsWorkloadsInOrder(t *testing.T) {
	o, err := parseFlags([]string{"--workloads", "compose-post:10, mixed:20", "--runs", "2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.workloads) != 2 || o.workloads[0] != "compose-post" || o.requests["mixed"] != 20 || o.runs != 2 {
		t.Fatalf("%+v", o)
	}
	for _, bad := range []string{"mixed", "mixed:0", "mixed:x"} {
		if _, err := parseFlags([]string{"--workloads", bad}); err == nil {
			t.Errorf("--workloads %q parsed", bad)
		}
	}
}

func TestMedianOfOddAndEvenRuns(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median of 3,1,2 = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4,1,3,2 = %v", m)
	}
}

// A process's CPU counts its own work, and with children that of a child
// it started and that is still running.
func TestCPUSecondsCountsChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	busy := exec.Command("sh", "-c", `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 5`)
	parent := exec.Command("sh", "-c", `"$0" -c "$1" & wait`, "sh", busy.Args[2])
	parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// the whole group: the child outlives its shell otherwise
		syscall.Kill(-parent.Process.Pid, syscall.SIGKILL)
		parent.Wait()
	}()
	p := &proc{name: "sh", cmd: parent, withChildren: true}
	deadline := time.Now().Add(10 * time.Second)
	for {
		seconds, err := p.cpuSeconds()
		if err != nil {
			t.Fatal(err)
		}
		if seconds >= 0.05 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a busy child's CPU is not counted: %.2f s", seconds)
		}
		time.Sleep(100 * time.Millisecond)
	}
	alone := &proc{name: "sh", cmd: parent}
	if seconds, err := alone.cpuSeconds(); err != nil || seconds >= 0.05 {
		t.Fatalf("without children the idle parent counts %.2f s, %v", seconds, err)
	}
}
