package nomad

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// fakeProc points limits.ProcRoot at a tree of /proc/<pid>/cgroup files.
func fakeProc(t *testing.T, procs map[int]string) {
	t.Helper()
	old := limits.ProcRoot
	t.Cleanup(func() { limits.ProcRoot = old })
	limits.ProcRoot = t.TempDir()
	for pid, cg := range procs {
		dir := filepath.Join(limits.ProcRoot, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExecTaskPIDMatchesTheWholeCgroupName(t *testing.T) {
	const alloc = "aaaaaaaa-0000-0000-0000-000000000001"
	const other = "bbbbbbbb-0000-0000-0000-000000000002"
	v1 := func(scope string) string {
		return "9:name=systemd:/\n5:cpuset:/nomad/share\n4:memory:/nomad/" + scope + "\n2:cpu,cpuacct:/nomad/" + scope + "\n0::/\n"
	}
	v2 := func(scope string) string { return "0::/nomad.slice/share.slice/" + scope + ".scope\n" }
	cases := []struct {
		name    string
		procs   map[int]string
		task    string
		want    int // 0: must not be found
		wantErr string
	}{
		{"v1: web is not web-cache", map[int]string{
			10: v1(alloc + ".web-cache"), 20: v1(alloc + ".web"), 21: v1(alloc + ".web")}, "web", 20, ""},
		{"v1: web-cache is not web", map[int]string{
			10: v1(alloc + ".web"), 20: v1(alloc + ".web-cache")}, "web-cache", 20, ""},
		{"v1: only a task whose name contains the wanted one", map[int]string{
			10: v1(alloc + ".web-cache"), 11: v1(alloc + ".web.old")}, "web", 0, "no process of task web in alloc aaaaaaaa"},
		{"v1: same task in another allocation", map[int]string{10: v1(other + ".web")}, "web", 0, "no process of task web"},
		{"v1: the allocation only in the cpuset path", map[int]string{
			10: "5:cpuset:/nomad/reserve/" + alloc + ".web\n2:cpu,cpuacct:/nomad/unrelated\n4:memory:/nomad/unrelated\n"}, "web", 0, "no process"},
		{"v2: web is not web-cache", map[int]string{
			10: v2(alloc + ".web-cache"), 30: v2(alloc + ".web")}, "web", 30, ""},
		{"v2: only web-cache", map[int]string{10: v2(alloc + ".web-cache")}, "web", 0, "no cgroup named " + alloc + ".web"},
		{"v2: v1 naming does not count on v2", map[int]string{10: "0::/nomad.slice/share.slice/" + alloc + ".web\n"}, "web", 0, "no process"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fakeProc(t, c.procs)
			pid, err := execTaskPID(context.Background(), nodeprobe.Local{NodeName: "n1"}, alloc, c.task)
			if c.want == 0 {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("pid %d, error %v; want an error saying %q", pid, err, c.wantErr)
				}
				return
			}
			if err != nil || pid != c.want {
				t.Fatalf("pid %d, error %v; want %d", pid, err, c.want)
			}
		})
	}
}

// The archive keeps Limits as JSON: what was found must read plainly there,
// with "no quota" spelled out rather than left to a zero.
func TestLimitsJSONSaysWhatWasEnforced(t *testing.T) {
	p := orchestrator.Instance{ID: "a1", Group: "taewa", Task: "taewa", Driver: "docker", Declared: contract.Task{Cores: 0, MemoryMiB: 2048, CPUMode: contract.CPUModeShares}}
	e := limits.Enforced{Version: 1, QuotaUS: -1, PeriodUS: 100000, CPUSet: "0-1", CPUSetSize: 2, MemoryBytes: 2048 << 20, MemoryMiB: 2048, CgroupPath: "/docker/x", MemoryCgroupPath: "/docker/x"}
	b, err := json.Marshal(orchestrator.LimitsOf(p, e))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cpu_mode":"shares"`, `"quota_cores":0`, `"cfs_quota_us":-1`, `"cfs_period_us":100000`, `"cpuset":"0-1"`, `"cpuset_size":2`,
		`"effective_cores":2`, `"memory_limit_bytes":2147483648`, `"memory_limit_mib":2048`, `"cgroup_version":1`, `"declared":{"cores":0,"memory_mib":2048,"cpu_mode":"shares"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

// Instances must surface a bad declaration as an error, so the runner
// fails the limits gate with it instead of checking against 0.
func TestInstancesRefuseAnUnparsableDeclaration(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body any
		switch r.URL.Path {
		case "/v1/job/taewa-baseline":
			body = map[string]any{"ID": "taewa-baseline", "Version": 1, "Meta": map[string]string{contract.KeyCores: "one", contract.KeyMemoryMiB: "256"},
				"TaskGroups": []map[string]any{{"Name": "taewa", "Count": 1, "Tasks": []map[string]any{{"Name": "taewa", "Driver": "docker"}}}}}
		case "/v1/nodes":
			body = []map[string]any{{"ID": "n1", "Name": "node1", "Status": "ready"}}
		case "/v1/node/n1":
			body = map[string]any{"ID": "n1", "Name": "node1", "Attributes": map[string]string{"cpu.totalcompute": "4200", "cpu.numcores": "2"}}
		case "/v1/job/taewa-baseline/allocations":
			body = []map[string]any{{"ID": allocA1, "JobVersion": 1, "DesiredStatus": "run", "ClientStatus": "running", "TaskGroup": "taewa", "NodeID": "n1"}}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Nomad-Index", "1")
		_ = json.NewEncoder(w).Encode(body)
	}))
	defer srv.Close()
	a, err := New(srv.URL, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	d := &orchestrator.Deployment{Job: "taewa-baseline", Version: 1}
	_, err = a.Limits(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), `nomad: job taewa-baseline, group taewa, task taewa: job meta orchbench_cores = "one"`) {
		t.Fatalf("error %v; want the unparsable orchbench_cores named", err)
	}
}

// rootThenTask is a node whose task process reads as the root cgroup for
// its first reads (an exiting init on cgroup v1), then as its own.
type rootThenTask struct {
	nodeprobe.Node
	rootReads, reads, lookups int
}

func (n *rootThenTask) NomadTaskProcess(context.Context, string, string) (nodeprobe.TaskProcess, error) {
	n.lookups++
	return nodeprobe.TaskProcess{PID: 100 + n.lookups, ImageID: "sha256:img"}, nil
}

func (n *rootThenTask) Limits(_ context.Context, pid int) (limits.Enforced, error) {
	n.reads++
	if n.reads <= n.rootReads {
		return limits.Enforced{CgroupPath: "/", MemoryCgroupPath: "/"}, nil
	}
	return limits.Enforced{CgroupPath: "/docker/abc", MemoryCgroupPath: "/docker/abc", MemoryMiB: 512}, nil
}

func TestTaskLimitsReadsARootCgroupAgain(t *testing.T) {
	old := rootCgroupPause
	rootCgroupPause = 0
	t.Cleanup(func() { rootCgroupPause = old })
	task := orchestrator.Instance{ID: "aaaaaaaa-0000", Group: "postgres", Task: "postgres", Driver: "docker"}
	for _, c := range []struct {
		rootReads   int
		wantPath    string
		wantLookups int
	}{
		{0, "/docker/abc", 1},
		{2, "/docker/abc", 3},
		// still in the root after every retry: returned as read, for the gate to refuse
		{10, "/", rootCgroupRetries + 1},
	} {
		n := &rootThenTask{rootReads: c.rootReads}
		e, img, err := taskLimits(context.Background(), n, task)
		if err != nil {
			t.Fatal(err)
		}
		if e.MemoryCgroupPath != c.wantPath || n.lookups != c.wantLookups || img != "sha256:img" {
			t.Errorf("%d reads in the root: cgroup %q after %d lookups (image %q), want %q after %d",
				c.rootReads, e.MemoryCgroupPath, n.lookups, img, c.wantPath, c.wantLookups)
		}
	}
}
