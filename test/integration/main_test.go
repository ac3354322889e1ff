//go:build integration

// Package integration runs orchbench against a real embedded cluster: real
// Nomad, Consul, dockerd and VictoriaMetrics started by the project's own
// scripts. TestMain brings the cluster up once, and down at the end, and
// fails if any process the cluster started is left behind.
// ORCHBENCH_IT_REUSE_CLUSTER=1 runs the tests against a cluster that is
// already up and leaves it up (for iterating on one test).
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/results"
)

var (
	root      string // repository root
	orchbench string // the orchbench binary built for this run
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, _ := os.Getwd()
	root = filepath.Clean(filepath.Join(wd, "..", ".."))
	os.Setenv("NOMAD_ADDR", "http://127.0.0.1:4646")
	os.Setenv("CONSUL_HTTP_ADDR", "http://127.0.0.1:8500")
	os.Setenv("PATH", filepath.Join(root, ".tools", "bin")+":"+os.Getenv("PATH"))

	tmp, err := os.MkdirTemp("", "orchbench-it")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(tmp)
	orchbench = filepath.Join(tmp, "orchbench")
	if out, err := sh(root, "go", "build", "-o", orchbench, "./harness/cmd/orchbench"); err != nil {
		fmt.Println(out)
		return 1
	}
	if os.Getenv("ORCHBENCH_IT_REUSE_CLUSTER") == "1" {
		// a developer iterating on one test against a cluster that is up;
		// `just test` never sets it, so CI always checks start-up and teardown
		return m.Run()
	}
	// a cluster left over from an earlier run would hide start-up problems
	sh(root, "cluster/embedded.sh", "down")
	host := filepath.Join(tmp, "host-before")
	if out, err := sh(root, "cluster/hoststate.sh", "snapshot", host); err != nil {
		fmt.Println("FAIL: cannot record the host before cluster-up:", err, out)
		return 1
	}
	before := daemons()
	if code := portInUseFailsBeforeStarting(); code != 0 {
		return code
	}
	out, err := sh(root, "cluster/embedded.sh", "up")
	fmt.Print(out)
	if err != nil {
		sh(root, "cluster/embedded.sh", "down")
		return 1
	}
	code := m.Run()
	out, err = sh(root, "cluster/embedded.sh", "down")
	fmt.Print(out)
	if err != nil {
		return 1
	}
	if left := leftovers(); left != "" {
		fmt.Println("FAIL: processes left behind by cluster-down:\n" + left)
		return 1
	}
	if after := daemons(); after != before {
		fmt.Printf("FAIL: container daemons running after cluster-down that were not before:\nbefore: %q\nafter:  %q\n", before, after)
		return 1
	}
	// links, iptables chains and rules, mounts and namespaces the cluster made
	left, err := sh(root, "cluster/hoststate.sh", "diff", host)
	if err != nil || strings.TrimSpace(left) != "" {
		fmt.Printf("FAIL: cluster-down left on the host what cluster-up found absent (%v):\n%s", err, left)
		return 1
	}
	fmt.Println("ok: cluster-down left no process, link, iptables chain or rule, mount or namespace behind")
	return code
}

// daemons lists the container daemons running, by name and count.
func daemons() string {
	var parts []string
	for _, name := range []string{"dockerd", "containerd", "containerd-shim-runc-v2", "docker-proxy"} {
		out, _ := exec.Command("pgrep", "-x", name).Output()
		if n := len(strings.Fields(string(out))); n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", name, n))
		}
	}
	return strings.Join(parts, " ")
}

// portInUseFailsBeforeStarting holds Consul's HTTP port and expects cluster-up
// to refuse, name the port and this process, and start nothing.
func portInUseFailsBeforeStarting() int {
	l, err := net.Listen("tcp", "127.0.0.1:8500")
	if err != nil {
		fmt.Println("FAIL: cannot hold port 8500 for the port-in-use check:", err)
		return 1
	}
	out, err := sh(root, "cluster/embedded.sh", "up")
	l.Close()
	fmt.Print(out)
	if err == nil {
		fmt.Println("FAIL: cluster-up succeeded with port 8500 held")
		sh(root, "cluster/embedded.sh", "down")
		return 1
	}
	if !strings.Contains(out, "port 8500/tcp is already in use by") || !strings.Contains(out, "nothing was started") {
		fmt.Println("FAIL: cluster-up did not name port 8500 and its holder")
		return 1
	}
	if left := leftovers(); left != "" {
		fmt.Println("FAIL: cluster-up started processes although a port was in use:\n" + left)
		return 1
	}
	fmt.Println("ok: cluster-up refused with port 8500 in use and started nothing")
	return 0
}

// leftovers lists processes of the project's own binaries or recorded PIDs.
func leftovers() string {
	var b strings.Builder
	for _, bin := range []string{"nomad", "consul", "victoria-metrics"} {
		out, _ := exec.Command("pgrep", "-af", "^"+filepath.Join(root, ".tools", "bin", bin)+" ").Output()
		b.Write(out)
	}
	pids, _ := filepath.Glob(filepath.Join(root, ".state", "pids", "*"))
	for _, p := range pids {
		pid, _ := os.ReadFile(p)
		if exec.Command("kill", "-0", strings.TrimSpace(string(pid))).Run() == nil {
			fmt.Fprintf(&b, "%s (pid %s)\n", filepath.Base(p), strings.TrimSpace(string(pid)))
		}
	}
	return b.String()
}

// sh runs a command in dir with a generous bound and returns its combined output.
func sh(dir string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// must runs a command and fails the test with its output when it fails.
func must(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := sh(root, name, args...)
	t.Logf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

// eventually retries check until it passes or the bound runs out.
func eventually(t *testing.T, within time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %s: %v", what, within, err)
		}
		time.Sleep(time.Second)
	}
}

// sweepSteps writes spec to a file, runs `orchbench sweep` on it (with any
// extra flags) and returns the archived steps of the sweep called name.
func sweepSteps(t *testing.T, name, spec string, flags ...string) []results.StepResult {
	t.Helper()
	work := t.TempDir()
	file := filepath.Join(work, name+".hcl")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "results")
	must(t, orchbench, append([]string{"sweep", "-f", file, "--dir", dir, "--reports", filepath.Join(work, "reports")}, flags...)...)
	archive := results.Archive{Dir: dir}
	id, err := archive.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := archive.LoadSteps(id)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// taewaVerticalStep runs one short Taewa vertical step (`orchbench run`) on
// a job already deployed on orch, archived in dir, and returns it.
func taewaVerticalStep(t *testing.T, orch, job, dir string) results.StepResult {
	t.Helper()
	must(t, orchbench, "run", "taewa", "--orchestrator", orch, "--variant", "vertical", "--var", "resource_scale=0.25",
		"--var", "job_name="+job, "--rate", "20", "-d", "3s", "--warmup", "1s", "--dir", dir, "--vm", "")
	archive := results.Archive{Dir: dir}
	id, err := archive.Resolve("run-taewa")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := archive.LoadSteps(id)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps %v, error %v", steps, err)
	}
	return steps[0]
}

// killWhenLoadRuns waits until a load generator runs on this machine (the
// orchestrator's load job or the local runner), lets it run for after, then
// SIGKILLs the processes pids names behind the orchestrator's back, and
// reports how many it killed.
func killWhenLoadRuns(ctx context.Context, pids func() []int, after time.Duration, killed chan<- int) {
	defer close(killed)
	for ctx.Err() == nil {
		if loadGeneratorRunning() {
			time.Sleep(after)
			n := 0
			for _, pid := range pids() {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					n++
				}
			}
			killed <- n
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func loadGeneratorRunning() bool {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		argv := strings.Split(string(b), "\x00")
		if len(argv) > 1 && filepath.Base(argv[0]) == "orchbench" && (argv[1] == "loadjob" || argv[1] == "load") {
			return true
		}
	}
	return false
}

// cgroupProcs lists the processes of a cgroup directory.
func cgroupProcs(dir string) func() []int {
	return func() []int {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return pids
	}
}

// uiText renders url in headless Chromium until its text shows every one of
// texts (cluster/ui-text.mjs: web UIs with blocking queries never finish
// loading for --dump-dom) and returns the page's text.
func uiText(t *testing.T, url string, texts ...string) string {
	t.Helper()
	out, err := exec.Command("node", append([]string{"--experimental-websocket", filepath.Join(root, "cluster", "ui-text.mjs"), url, "60"}, texts...)...).Output()
	var page struct {
		OK      bool     `json:"ok"`
		Missing []string `json:"missing"`
		Text    string   `json:"text"`
		Reason  string   `json:"reason"`
	}
	if jerr := json.Unmarshal(out, &page); jerr != nil {
		t.Fatalf("cluster/ui-text.mjs %s: %v (%v): %s", url, err, jerr, out)
	}
	if !page.OK {
		t.Errorf("%s does not show %q within 60 s %s; it shows:\n%.2000s", url, page.Missing, page.Reason, page.Text)
	}
	return page.Text
}

// chromiumDOM renders url in headless Chromium and returns the DOM after the
// page's scripts ran (15 s of virtual time).
func chromiumDOM(t *testing.T, url string) string {
	t.Helper()
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatalf("chromium is missing (it is in cluster/versions.env APT_PACKAGES): %v", err)
	}
	out, err := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=15000", "--window-size=1400,2000",
		"--dump-dom", url).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", url, err)
	}
	return string(out)
}
