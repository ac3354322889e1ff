package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/testenv"
)

// writableHierarchy is a mounted cgroup hierarchy this process can make a
// cgroup in and move a process into (root on a writable cgroupfs).
func writableHierarchy(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "not root: no cgroup can be made")
	}
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil {
		testenv.Missing(t, "no /proc/mounts: %v", err)
	}
	probe := fmt.Sprintf("orchbench-hoststate-probe-%d", os.Getpid())
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		// a new cpuset cgroup has no CPUs, so no process can join it
		if len(f) < 4 || (f[2] != "cgroup" && f[2] != "cgroup2") || strings.Contains(f[3], "cpuset") {
			continue
		}
		if err := os.Mkdir(filepath.Join(f[1], probe), 0o755); err == nil {
			os.Remove(filepath.Join(f[1], probe))
			return f[1]
		}
	}
	testenv.Missing(t, "no cgroup hierarchy in /proc/mounts takes a new cgroup")
	return ""
}

// hasLine reports whether TEXT has the line LINE.
func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// running reports whether process PID is alive: not gone and not a zombie
// (a killed child stays one until it is waited for).
func running(pid string) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return false
	}
	// the state follows the command name, which is in parentheses
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	f := strings.Fields(rest)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// A cgroup made after the snapshot shows in the diff and is removed, with
// the one inside it; one there before the snapshot is left; one a process
// holds is reported with the process, which is left alive.
func TestHoststateRecordsAndRemovesCgroups(t *testing.T) {
	h := writableHierarchy(t)
	prefix := fmt.Sprintf("orchbench-hoststate-test-%d-", os.Getpid())
	regex := "^" + regexp.QuoteMeta(prefix)
	before := filepath.Join(h, prefix+"before")
	made := filepath.Join(h, prefix+"made")
	child := filepath.Join(made, "child")
	t.Cleanup(func() {
		for _, d := range []string{child, made, before} {
			os.Remove(d)
		}
	})
	if err := os.Mkdir(before, 0o755); err != nil {
		t.Fatal(err)
	}
	snap := t.TempDir()
	if r := runScript(t, nil, "hoststate.sh", "snapshot", snap); r.err != nil {
		t.Fatalf("snapshot: %v\n%s", r.err, r.stderr)
	}
	for _, d := range []string{made, child} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	diff := runScript(t, nil, "hoststate.sh", "diff", snap)
	if diff.err != nil {
		t.Fatalf("diff: %v\n%s", diff.err, diff.stderr)
	}
	if !hasLine(diff.stdout, "cgroups: "+made) {
		t.Errorf("the diff does not show the cgroup made after the snapshot (%s):\n%s", made, diff.stdout)
	}
	if strings.Contains(diff.stdout, before) {
		t.Errorf("the diff shows the cgroup that was there before the snapshot:\n%s", diff.stdout)
	}

	// a process in the child: the cgroup cannot go, and the process stays
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	pid := strconv.Itoa(sleeper.Process.Pid)
	if err := os.WriteFile(filepath.Join(child, "cgroup.procs"), []byte(pid), 0o644); err != nil {
		t.Fatalf("move the sleeper into %s: %v", child, err)
	}
	held := runScript(t, nil, "hoststate.sh", "clean-cgroups", regex, snap)
	if held.err != nil || !strings.Contains(held.stdout, "cgroups not removable: "+made+" (processes in them: "+pid+")") {
		t.Errorf("a held cgroup: want it reported with process %s, got (%v):\n%s%s", pid, held.err, held.stdout, held.stderr)
	}
	if _, err := os.Stat(made); err != nil {
		t.Errorf("the held cgroup is gone: %v", err)
	}
	if !running(pid) {
		t.Errorf("the process in the held cgroup (pid %s) was killed", pid)
	}
	sleeper.Process.Kill()
	sleeper.Wait()

	cleaned := runScript(t, nil, "hoststate.sh", "clean-cgroups", regex, snap)
	if cleaned.err != nil || !strings.Contains(cleaned.stdout, "removed 1 cgroups named "+regex) {
		t.Errorf("clean-cgroups since the snapshot (%v):\n%s%s", cleaned.err, cleaned.stdout, cleaned.stderr)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("%s outlived clean-cgroups: %v", made, err)
	}
	if _, err := os.Stat(before); err != nil {
		t.Errorf("clean-cgroups removed %s, which was there before the snapshot: %v", before, err)
	}
	if after := runScript(t, nil, "hoststate.sh", "diff", snap); strings.Contains(after.stdout, made) {
		t.Errorf("the diff still shows %s:\n%s", made, after.stdout)
	}

	// without a snapshot, every cgroup of the name goes
	all := runScript(t, nil, "hoststate.sh", "clean-cgroups", regex)
	if _, err := os.Stat(before); all.err != nil || !os.IsNotExist(err) {
		t.Errorf("clean-cgroups without a snapshot left %s (%v, %v):\n%s", before, all.err, err, all.stdout)
	}
}
