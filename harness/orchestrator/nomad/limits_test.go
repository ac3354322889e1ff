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

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

func TestDeclared(t *testing.T) {
	intp := func(n int) *int { return &n }
	str := func(s string) *string { return &s }
	cases := []struct {
		name      string
		jobMeta   map[string]string
		groupMeta map[string]string
		task      api.Task
		want      declaration
		wantErr   []string // each must appear in the error; nil: no error
	}{
		{name: "resources without meta: MHz become cores, docker enforces them as a quota",
			task: api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(1050), MemoryMB: intp(512)}},
			want: declaration{cores: 0.5, memoryMiB: 512, cpuMode: orchestrator.CPUModeQuota}},
		{name: "meta intent wins over resources",
			jobMeta: map[string]string{metaCores: "0.25", metaMemory: "256"},
			task:    api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(1050), MemoryMB: intp(512)}},
			want:    declaration{cores: 0.25, memoryMiB: 256, cpuMode: orchestrator.CPUModeQuota}},
		{name: "memory_max is the hard limit, memory only reserves",
			task: api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(1050), MemoryMB: intp(256), MemoryMaxMB: intp(2048)}},
			want: declaration{cores: 0.5, memoryMiB: 2048, cpuMode: orchestrator.CPUModeQuota}},
		{name: "reserved cores are a cpuset",
			task: api.Task{Driver: "exec", Resources: &api.Resources{Cores: intp(2), MemoryMB: intp(1024)}},
			want: declaration{cores: 2, memoryMiB: 1024, cpuMode: orchestrator.CPUModeCPUSet}},
		{name: "exec MHz only reserve",
			task: api.Task{Driver: "exec", Resources: &api.Resources{CPU: intp(525), MemoryMB: intp(256)}},
			want: declaration{cores: 0.25, memoryMiB: 256, cpuMode: orchestrator.CPUModeUnenforced}},
		{name: "no cores declared: no cap",
			jobMeta: map[string]string{metaCores: "0", metaMemory: "2048"},
			task:    api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(525), MemoryMB: intp(256), MemoryMaxMB: intp(2048)}},
			want:    declaration{cores: 0, memoryMiB: 2048, cpuMode: orchestrator.CPUModeShares}},
		{name: "task meta before group before job",
			jobMeta:   map[string]string{metaCores: "9", metaMemory: "9", metaCPUMode: "unenforced"},
			groupMeta: map[string]string{metaCores: "1", metaCPUMode: "cpuset"},
			task:      api.Task{Driver: "docker", Meta: map[string]string{metaCores: "0", metaCPUMode: "shares"}},
			want:      declaration{cores: 0, memoryMiB: 9, cpuMode: orchestrator.CPUModeShares}},
		{name: "unparsable cores",
			jobMeta: map[string]string{metaCores: "1,5"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"job taewa-baseline, group taewa, task web", "job meta orchbench_cores", `"1,5"`}},
		{name: "negative cores",
			groupMeta: map[string]string{metaCores: "-1"},
			task:      api.Task{Driver: "docker"},
			wantErr:   []string{"task web", "group meta orchbench_cores", `"-1"`}},
		{name: "NaN cores",
			task:    api.Task{Driver: "docker", Meta: map[string]string{metaCores: "NaN"}},
			wantErr: []string{"task meta orchbench_cores", `"NaN"`}},
		{name: "unparsable memory",
			jobMeta: map[string]string{metaCores: "1", metaMemory: "1GiB"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"task web", "job meta orchbench_memory_mib", `"1GiB"`}},
		{name: "fractional memory",
			jobMeta: map[string]string{metaCores: "1", metaMemory: "256.5"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"orchbench_memory_mib", `"256.5"`}},
		{name: "unknown CPU mode",
			jobMeta: map[string]string{metaCores: "1", metaMemory: "256", metaCPUMode: "hard"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"task web", "job meta orchbench_cpu_mode", `"hard"`, "valid: quota, shares, cpuset, unenforced"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := &api.Job{ID: str("taewa-baseline"), Meta: c.jobMeta}
			group := &api.TaskGroup{Name: str("taewa"), Meta: c.groupMeta}
			task := c.task
			task.Name = "web"
			got, err := declared(job, group, &task, 2100)
			if c.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got != c.want {
					t.Fatalf("got %+v, want %+v", got, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; declared %+v", got)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

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
			pid, err := execTaskPID(alloc, c.task)
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
	p := orchestrator.Placement{AllocID: "a1", Group: "taewa", Task: "taewa", Driver: "docker", DeclaredCores: 0, DeclaredMemoryMiB: 2048, CPUMode: "shares"}
	e := limits.Enforced{Version: 1, QuotaUS: -1, PeriodUS: 100000, CPUSet: "0-1", CPUSetSize: 2, MemoryBytes: 2048 << 20, MemoryMiB: 2048, CgroupPath: "/docker/x", MemoryCgroupPath: "/docker/x"}
	b, err := json.Marshal(limitsOf(p, e))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cpu_mode":"shares"`, `"quota_cores":0`, `"cfs_quota_us":-1`, `"cfs_period_us":100000`, `"cpuset":"0-1"`, `"cpuset_size":2`,
		`"effective_cores":2`, `"memory_limit_bytes":2147483648`, `"memory_limit_mib":2048`, `"cgroup_version":1`, `"declared_memory_mib":2048`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

// Placements must surface a bad declaration as an error, so the runner
// fails the limits gate with it instead of checking against 0.
func TestPlacementsRefuseAnUnparsableDeclaration(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body any
		switch r.URL.Path {
		case "/v1/job/taewa-baseline":
			body = map[string]any{"ID": "taewa-baseline", "Version": 1, "Meta": map[string]string{metaCores: "one", metaMemory: "256"},
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
	if err == nil || !strings.Contains(err.Error(), `job taewa-baseline, group taewa, task taewa: job meta orchbench_cores = "one"`) {
		t.Fatalf("error %v; want the unparsable orchbench_cores named", err)
	}
}
