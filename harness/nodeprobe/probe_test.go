package nodeprobe

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/testutil"
)

// remote serves this machine as node name over real HTTP on 127.0.0.1 and
// returns a client of it.
func remote(t *testing.T, name string) *Client {
	t.Helper()
	srv := httptest.NewServer(NewServer(Local{NodeName: name}))
	t.Cleanup(srv.Close)
	return NewClient(name, srv.URL)
}

// child starts a process of the test's own (a sleep) and returns its PID.
func child(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

var ctx = context.Background()

func TestClientReadsTheLimitsAndCgroupsOfRealProcesses(t *testing.T) {
	c := remote(t, "n2")
	if name, err := c.Identity(ctx); err != nil || name != "n2" {
		t.Fatalf("identity %q, %v; want n2", name, err)
	}
	sleeper := child(t)
	for _, pid := range []int{os.Getpid(), sleeper} {
		want, wantErr := limits.ForPID(pid)
		got, err := c.Limits(ctx, pid)
		if wantErr != nil {
			// a machine whose cgroups cannot be read still shows the same failure
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(wantErr.Error(), "limits of pid "+strconv.Itoa(pid)+": ")) {
				t.Fatalf("pid %d: remote error %v; the local read failed with %v", pid, err, wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("pid %d: remote limits %+v (%v); local %+v", pid, got, err, want)
		}
		cg, err := c.CPUCgroupOf(ctx, pid)
		if err != nil || cg != want.CgroupPath {
			t.Fatalf("pid %d: CPU cgroup %q (%v); want %q", pid, cg, err, want.CgroupPath)
		}
	}
	procs, err := c.Processes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]limits.Membership{}
	for _, m := range procs {
		seen[m.PID] = m
	}
	for _, pid := range []int{os.Getpid(), sleeper} {
		want, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		if err != nil {
			t.Fatal(err)
		}
		m, ok := seen[pid]
		if !ok || len(m.Paths) == 0 {
			t.Fatalf("pid %d missing from the remote process list (%d processes)", pid, len(procs))
		}
		for controller, path := range m.Paths {
			if !strings.Contains(string(want), ":"+path) || (controller != "" && !strings.Contains(string(want), controller)) {
				t.Fatalf("pid %d: remote membership %s=%s is not in its /proc cgroup file:\n%s", pid, controller, path, want)
			}
		}
	}
}

func TestClientSamplesCPUOnItsOwnClock(t *testing.T) {
	c := remote(t, "n2")
	e, err := limits.ForPID(os.Getpid())
	if err != nil {
		t.Skipf("this machine's cgroups cannot be read: %v", err)
	}
	before := time.Now()
	first, err := c.Usage(ctx, e.CgroupPath)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	later, err := c.Usage(ctx, e.CgroupPath)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if first.At.Before(before) || later.At.After(after) || !later.At.After(first.At) {
		t.Fatalf("readings at %v and %v, not inside the calls' span [%v, %v]", first.At, later.At, before, after)
	}
	if later.CPU <= first.CPU {
		t.Fatalf("the cgroup's CPU went from %v to %v across 50 ms of spinning", first.CPU, later.CPU)
	}
	local, lerr := limits.ResidentBytes(e.MemoryCgroupPath)
	got, err := c.ResidentBytes(ctx, e.MemoryCgroupPath)
	if (err == nil) != (lerr == nil) || (err == nil && got <= 0) {
		t.Fatalf("remote resident bytes %d (%v); local %d (%v)", got, err, local, lerr)
	}
}

func TestClientFindsTheAcceptingProcessAndExecutables(t *testing.T) {
	c := remote(t, "n2")
	addr := testutil.ListenAndHold(t, nil)
	a, found, err := c.AcceptorOf(ctx, "", addr, 2*time.Second)
	if err != nil || !found || a.PID != os.Getpid() || a.Command == "" {
		t.Fatalf("acceptor %+v, found %v, error %v; want this test (pid %d)", a, found, err, os.Getpid())
	}
	// a port nobody listens on is a refused dial, as it is locally: the
	// load-path gate calls that address unanswered
	_, found, err = c.AcceptorOf(ctx, "", "127.0.0.1:"+strconv.Itoa(testutil.FreePort(t)), time.Second)
	var dial *net.OpError
	if found || !errors.As(err, &dial) || dial.Op != "dial" || !strings.Contains(err.Error(), "node n2: acceptor of 127.0.0.1:") {
		t.Fatalf("found %v, error %v; want a dial error on node n2", found, err)
	}

	sleeper := child(t)
	exes, err := c.Executables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	var sawSelf, sawSleep bool
	for _, e := range exes {
		sawSelf = sawSelf || (e.PID == os.Getpid() && e.Path == self)
		sawSleep = sawSleep || (e.PID == sleeper && strings.HasSuffix(e.Path, "/sleep"))
	}
	if !sawSelf || !sawSleep {
		t.Fatalf("executables of %d processes: this test (%v, pid %d, %s), the sleep (%v, pid %d)", len(exes), sawSelf, os.Getpid(), self, sawSleep, sleeper)
	}
}

func TestErrorsNameTheNodeAndWhatWasAsked(t *testing.T) {
	c := remote(t, "n2")
	missing := 1 << 30 // above the kernel's PID limit: no such process
	_, err := c.Limits(ctx, missing)
	var remoteErr *Error
	if !errors.As(err, &remoteErr) || !errors.Is(err, fs.ErrNotExist) ||
		!strings.HasPrefix(err.Error(), "node n2: limits of pid "+strconv.Itoa(missing)+": ") || strings.Count(err.Error(), "limits of pid") != 1 {
		t.Fatalf("error %v; want node n2's own error, once, about limits of pid %d, that is fs.ErrNotExist", err, missing)
	}

	_, _, err = c.AcceptorOf(ctx, "", "127.0.0.1:1", time.Hour)
	if err == nil || !strings.Contains(err.Error(), "node n2: acceptor of 127.0.0.1:1: a wait of 1h0m0s") {
		t.Fatalf("an hour's wait: error %v; want it refused by node n2", err)
	}

	srv := httptest.NewServer(NewServer(Local{NodeName: "n3"}))
	down := NewClient("n3", srv.URL)
	down.Timeout = time.Second
	srv.Close()
	_, err = down.Usage(ctx, "/")
	var dial *net.OpError
	if err == nil || !strings.HasPrefix(err.Error(), "node n3: CPU usage of cgroup /: probe at "+srv.URL) || errors.As(err, &dial) {
		t.Fatalf("probe down: error %v; want one naming node n3 and the operation, and not a dial error an acceptor check would take for the address's", err)
	}
	_, _, err = down.AcceptorOf(ctx, "", "127.0.0.1:1", time.Second)
	if err == nil || errors.As(err, &dial) {
		t.Fatalf("probe down: acceptor error %v; must not read as the address refusing", err)
	}
}

func TestResolvers(t *testing.T) {
	var none Resolver
	if n, ok := none.Node("orchbench-node").(Local); !ok || n.Name() != "orchbench-node" {
		t.Fatalf("the nil resolver gave %#v; want Local for the named node", none.Node("orchbench-node"))
	}
	c := remote(t, "n2")
	addrs, err := ParseProbes([]string{"n2=" + c.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	r := Probes(addrs, time.Second)
	if r.Node("n2") != r.Node("n2") {
		t.Fatal("the resolver made a new client for every lookup")
	}
	if name, err := r.Node("n2").(*Client).Identity(ctx); err != nil || name != "n2" {
		t.Fatalf("identity through the resolver %q, %v", name, err)
	}
	_, err = r.Node("n9").Limits(ctx, os.Getpid())
	if err == nil || !strings.HasPrefix(err.Error(), "node n9: limits of pid ") || !strings.Contains(err.Error(), "known: n2") {
		t.Fatalf("unknown node: %v; want it named, with the nodes that have probes", err)
	}
	for _, bad := range [][]string{{"n2"}, {"=1.2.3.4:5"}, {"n2=a:1", "n2=b:1"}} {
		if _, err := ParseProbes(bad); err == nil {
			t.Errorf("ParseProbes(%q) accepted", bad)
		}
	}
}

// This machine is every node of the nil resolver, however the orchestrators
// name it, so it is looked at once; probes are looked at once per node.
func TestMachinesGivesEachHostOnce(t *testing.T) {
	var here Resolver
	if m := here.Machines([]string{"orchbench-node", "debian", "orchbench-node"}); len(m) != 1 || m[0].Name() != "orchbench-node" {
		t.Fatalf("this machine under two names: %v", m)
	}
	r := Probes(map[string]string{"n1": "127.0.0.1:1", "n2": "127.0.0.1:2"}, time.Second)
	m := r.Machines([]string{"n1", "n2", "n1"})
	if len(m) != 2 || m[0].Name() != "n1" || m[1].Name() != "n2" {
		t.Fatalf("two probed nodes: %v", m)
	}
	if len(here.Machines(nil)) != 0 {
		t.Fatal("no names gave a node")
	}
}
