package contract

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

func TestParseTask(t *testing.T) {
	intp := func(n int) *int { return &n }
	str := func(s string) *string { return &s }
	cases := []struct {
		name      string
		jobMeta   map[string]string
		groupMeta map[string]string
		task      api.Task
		want      Task
		wantErr   []string // each must appear in the error; nil: no error
	}{
		{name: "resources without meta: MHz become cores, docker enforces them as a quota",
			task: api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(1050), MemoryMB: intp(512)}},
			want: Task{Cores: 0.5, MemoryMiB: 512, CPUMode: CPUModeQuota}},
		{name: "meta intent wins over resources",
			jobMeta: map[string]string{KeyCores: "0.25", KeyMemoryMiB: "256"},
			task:    api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(1050), MemoryMB: intp(512)}},
			want:    Task{Cores: 0.25, MemoryMiB: 256, CPUMode: CPUModeQuota}},
		{name: "memory_max is the hard limit, memory only reserves",
			task: api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(1050), MemoryMB: intp(256), MemoryMaxMB: intp(2048)}},
			want: Task{Cores: 0.5, MemoryMiB: 2048, CPUMode: CPUModeQuota}},
		{name: "reserved cores are a cpuset",
			task: api.Task{Driver: "exec", Resources: &api.Resources{Cores: intp(2), MemoryMB: intp(1024)}},
			want: Task{Cores: 2, MemoryMiB: 1024, CPUMode: CPUModeCPUSet}},
		{name: "exec MHz only reserve",
			task: api.Task{Driver: "exec", Resources: &api.Resources{CPU: intp(525), MemoryMB: intp(256)}},
			want: Task{Cores: 0.25, MemoryMiB: 256, CPUMode: CPUModeUnenforced}},
		{name: "no cores declared: no cap",
			jobMeta: map[string]string{KeyCores: "0", KeyMemoryMiB: "2048"},
			task:    api.Task{Driver: "docker", Resources: &api.Resources{CPU: intp(525), MemoryMB: intp(256), MemoryMaxMB: intp(2048)}},
			// no cap; the reserved MHz still weigh the task against others
			want: Task{Cores: 0, MemoryMiB: 2048, CPUMode: CPUModeShares, WeightCores: 0.25}},
		{name: "task meta before group before job",
			jobMeta:   map[string]string{KeyCores: "9", KeyMemoryMiB: "9", KeyCPUMode: "unenforced"},
			groupMeta: map[string]string{KeyCores: "1", KeyCPUMode: "cpuset"},
			task:      api.Task{Driver: "docker", Meta: map[string]string{KeyCores: "0", KeyCPUMode: "shares"}},
			want:      Task{Cores: 0, MemoryMiB: 9, CPUMode: CPUModeShares}},
		{name: "a datastore says so in its task meta",
			jobMeta: map[string]string{KeyCores: "0", KeyMemoryMiB: "512", KeyRole: "service"},
			task:    api.Task{Driver: "docker", Meta: map[string]string{KeyRole: "datastore"}},
			want:    Task{MemoryMiB: 512, CPUMode: CPUModeShares, Role: RoleDatastore}},
		{name: "unknown role",
			groupMeta: map[string]string{KeyCores: "1", KeyMemoryMiB: "256", KeyRole: "database"},
			task:      api.Task{Driver: "docker"},
			wantErr:   []string{"task web", "group meta orchbench_role", `"database"`, "valid: service, datastore"}},
		{name: "unparsable cores",
			jobMeta: map[string]string{KeyCores: "1,5"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"job taewa-baseline, group taewa, task web", "job meta orchbench_cores", `"1,5"`}},
		{name: "negative cores",
			groupMeta: map[string]string{KeyCores: "-1"},
			task:      api.Task{Driver: "docker"},
			wantErr:   []string{"task web", "group meta orchbench_cores", `"-1"`}},
		{name: "NaN cores",
			task:    api.Task{Driver: "docker", Meta: map[string]string{KeyCores: "NaN"}},
			wantErr: []string{"task meta orchbench_cores", `"NaN"`}},
		{name: "unparsable memory",
			jobMeta: map[string]string{KeyCores: "1", KeyMemoryMiB: "1GiB"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"task web", "job meta orchbench_memory_mib", `"1GiB"`}},
		{name: "fractional memory",
			jobMeta: map[string]string{KeyCores: "1", KeyMemoryMiB: "256.5"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"orchbench_memory_mib", `"256.5"`}},
		{name: "unknown CPU mode",
			jobMeta: map[string]string{KeyCores: "1", KeyMemoryMiB: "256", KeyCPUMode: "hard"},
			task:    api.Task{Driver: "docker"},
			wantErr: []string{"task web", "job meta orchbench_cpu_mode", `"hard"`, "valid: quota, shares, cpuset, unenforced"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := &api.Job{ID: str("taewa-baseline"), Meta: c.jobMeta}
			group := &api.TaskGroup{Name: str("taewa"), Meta: c.groupMeta}
			task := c.task
			task.Name = "web"
			got, err := ParseTask(job, group, &task, 2100)
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

func jobWithMeta(meta map[string]string) *api.Job {
	id := "sn"
	return &api.Job{ID: &id, Meta: meta}
}

func TestParseAppHooksParseAndFill(t *testing.T) {
	app, err := ParseApp(jobWithMeta(map[string]string{
		KeyVerifyArgs:    `["dsb","social-network","verify","--frontend","http://{{endpoint}}","--users","60","--note","{{endpoint}}/{{endpoint}}"]`,
		KeyVerifyTimeout: "90s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	filled := app.Verify.Fill("10.0.0.5:23456")
	want := []string{"dsb", "social-network", "verify", "--frontend", "http://10.0.0.5:23456", "--users", "60", "--note", "10.0.0.5:23456/10.0.0.5:23456"}
	if !reflect.DeepEqual(filled, want) {
		t.Errorf("filled %q, want %q", filled, want)
	}
	if app.Verify.Args[4] != "http://{{endpoint}}" {
		t.Errorf("Fill changed the hook: %q", app.Verify.Args)
	}
	if app.Verify.Timeout != 90*time.Second || app.Setup.Args != nil || app.Setup.Timeout != DefaultSetupTimeout {
		t.Errorf("verify timeout %s, setup %q with %s", app.Verify.Timeout, app.Setup.Args, app.Setup.Timeout)
	}
	blank, err := ParseApp(jobWithMeta(map[string]string{KeySetupArgs: "  "}))
	if err != nil || blank.Setup.Args != nil {
		t.Errorf("a blank hook: %q, %v; want none declared", blank.Setup.Args, err)
	}
}

// Every malformed value of the contract is an error naming the job, the
// key and the value, never a default that would let a step run unchecked.
func TestParseAppRefusesMalformedValues(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{KeySetupArgs, `["dsb", "verify"`},
		{KeySetupArgs, `[1, 2]`},
		{KeyVerifyArgs, `[]`},
		{KeySetupTimeout, "soon"},
		{KeyVerifyTimeout, "-5m"},
		{KeyVerifyTimeout, "0s"},
		{KeyProbeStatus, "OK"},
		{KeyProbeStatus, "42"},
		{KeyProbeMinBytes, "-1"},
		{KeyProbeMinBytes, "1k"},
		{KeyProbeRegex, "(unclosed"},
		{KeyProbeLoadReference, "no"},
		{KeyProbeLoadReference, ""},
	} {
		_, err := ParseApp(jobWithMeta(map[string]string{c.key: c.value}))
		if err == nil || !strings.Contains(err.Error(), "job sn") || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s = %q: error %v, want one naming the job and the key", c.key, c.value, err)
		}
	}
}

func TestParseAppReadsTheProbeAndService(t *testing.T) {
	app, err := ParseApp(jobWithMeta(map[string]string{KeyService: "taewa", KeyProbePath: "/?n=1", KeyProbeMinBytes: "44",
		KeyProbeRegex: "^The result", "other": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := app.RequireProbe()
	if err != nil || p.Path != "/?n=1" || p.Status != 200 || p.MinBytes != 44 || !p.Regex.MatchString("The result is") {
		t.Fatalf("probe %+v, %v", p, err)
	}
	if !app.Measured() || app.LoadPath != "/" || len(app.Meta) != 4 {
		t.Errorf("service %q, load path %q, meta %v", app.Service, app.LoadPath, app.Meta)
	}
	none, _ := ParseApp(jobWithMeta(nil))
	if _, err := none.RequireProbe(); err == nil || !strings.Contains(err.Error(), KeyProbePath) {
		t.Errorf("a measured app without a probe: %v", err)
	}
}

// A pack whose load asks its probe's path with other parameters (the hotel
// reservation's searches) says that the probe's answer is no size for
// theirs; by default, and with "true", it is.
func TestParseAppProbeLoadReference(t *testing.T) {
	for value, want := range map[string]bool{"": false, "true": false, "false": true, " false ": true} {
		meta := map[string]string{KeyProbePath: "/hotels?lat=1"}
		if value != "" {
			meta[KeyProbeLoadReference] = value
		}
		app, err := ParseApp(jobWithMeta(meta))
		if err != nil || app.ProbeNoLoadReference != want {
			t.Errorf("%s = %q: ProbeNoLoadReference %v (%v), want %v", KeyProbeLoadReference, value, app.ProbeNoLoadReference, err, want)
		}
	}
}
