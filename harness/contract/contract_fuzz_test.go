package contract

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// FuzzParseContract builds a job from fuzzed meta ("key=value" lines for
// the job, the group and the task) and task resources, and requires of
// ParseApp and ParseTask that an error names where it is and that what
// they accept holds the contract's promises.
func FuzzParseContract(f *testing.F) {
	taewa := "orchbench_app=taewa\norchbench_variant=vertical\norchbench_service=taewa\norchbench_probe_path=/?n=1000\n" +
		"orchbench_probe_min_bytes=44\norchbench_probe_regex=^The result of this run is :  \norchbench_load_path=/?n=1000\n" +
		"orchbench_cores=0.5\norchbench_memory_mib=256\norchbench_cpu_mode=quota\norchbench_count=1"
	f.Add(taewa, "", "", "docker", 1050, 0, 256, 0, 0b0101)
	f.Fuzz(func(t *testing.T, jobMeta, groupMeta, taskMeta, driver string, cpu, cores, memory, memoryMax, set int) {
		id, group := "fuzz-job", "fuzz-group"
		job := &api.Job{ID: &id, Meta: metaLines(jobMeta)}
		g := &api.TaskGroup{Name: &group, Meta: metaLines(groupMeta)}
		task := &api.Task{Name: "fuzz-task", Driver: driver, Meta: metaLines(taskMeta), Resources: &api.Resources{}}
		for i, field := range []**int{&task.Resources.CPU, &task.Resources.Cores, &task.Resources.MemoryMB, &task.Resources.MemoryMaxMB} {
			if set>>i&1 == 1 {
				*field = &[]int{cpu, cores, memory, memoryMax}[i]
			}
		}
		if set>>4&1 == 1 {
			task.Resources = nil
		}

		app, err := ParseApp(job)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "job fuzz-job: ") {
				t.Fatalf("error does not name the job: %v", err)
			}
		} else {
			requireAppPromises(t, job.Meta, app)
			// Meta holds every key the contract reads, so it alone parses
			// to the same app: an archived step's meta says what it ran.
			again, err := ParseApp(&api.Job{ID: &id, Meta: app.Meta})
			if err != nil || !sameApp(again, app) {
				t.Fatalf("reparsing the archived meta gave %+v, %v; want %+v", again, err, app)
			}
		}

		d, err := ParseTask(job, g, task, 2100)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "job fuzz-job, group fuzz-group, task fuzz-task: ") {
				t.Fatalf("error does not name the task: %v", err)
			}
			return
		}
		if !(d.Cores >= 0) || math.IsInf(d.Cores, 0) || d.MemoryMiB < 0 {
			t.Fatalf("negative or infinite intent %+v", d)
		}
		switch d.CPUMode {
		case CPUModeQuota, CPUModeShares, CPUModeCPUSet, CPUModeUnenforced:
		default:
			t.Fatalf("CPU mode %q", d.CPUMode)
		}
		if d.Role != "" && d.Role != RoleService && d.Role != RoleDatastore {
			t.Fatalf("role %q", d.Role)
		}
	})
}

// metaLines reads "key=value" lines; nil for no text, as Nomad leaves meta.
func metaLines(text string) map[string]string {
	if text == "" {
		return nil
	}
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

func requireAppPromises(t *testing.T, meta map[string]string, a App) {
	t.Helper()
	if a.Job != "fuzz-job" || !requestPath(a.LoadPath) || (a.Probe.Path != "" && !requestPath(a.Probe.Path)) {
		t.Fatalf("job %q, load path %q, probe path %q", a.Job, a.LoadPath, a.Probe.Path)
	}
	if a.Probe.Status < 100 || a.Probe.Status > 599 || a.Probe.MinBytes < 0 || (a.Probe.Regex != nil) != (meta[KeyProbeRegex] != "") {
		t.Fatalf("probe %+v from %q", a.Probe, meta[KeyProbeRegex])
	}
	for _, h := range []struct {
		hook Hook
		key  string
	}{{a.Prepare, KeyPrepareArgs}, {a.Setup, KeySetupArgs}, {a.Verify, KeyVerifyArgs}} {
		declared := strings.TrimSpace(meta[h.key]) != ""
		if h.hook.Timeout <= 0 || declared != (len(h.hook.Args) > 0) || (!declared && h.hook.Args != nil) {
			t.Fatalf("%s = %q gave %+v", h.key, meta[h.key], h.hook)
		}
	}
	for _, arg := range a.Prepare.Args {
		if strings.Contains(arg, endpointPlaceholder) {
			t.Fatalf("prepare hook with an endpoint: %q", a.Prepare.Args)
		}
	}
	for k, v := range meta {
		if got, ok := a.Meta[k]; strings.HasPrefix(k, Prefix) != ok || (ok && got != v) {
			t.Fatalf("meta %q = %q archived as %q, %v", k, v, got, ok)
		}
	}
}

func sameApp(x, y App) bool {
	rx, ry := x.Probe.Regex, y.Probe.Regex
	x.Probe.Regex, y.Probe.Regex = nil, nil
	return reflect.DeepEqual(x, y) && (rx == nil) == (ry == nil) && (rx == nil || rx.String() == ry.String())
}

// Values once accepted that no limit or request can be made of (seen in
// review, now held by FuzzParseContract's promises); each is now an error
// naming where it is.
func TestParseContractRefusesWhatFuzzingFound(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{KeyLoadPath, "index.html"},
		{KeyLoadPath, "/a b"},
		{KeyProbePath, "/\r\nHost: elsewhere"},
	} {
		_, err := ParseApp(jobWithMeta(map[string]string{c.key: c.value}))
		if err == nil || !strings.Contains(err.Error(), "job sn: job meta "+c.key) || !strings.Contains(err.Error(), "is not a request path") {
			t.Errorf("%s = %q: %v", c.key, c.value, err)
		}
	}
	minus := -100
	for name, r := range map[string]*api.Resources{"cpu": {CPU: &minus}, "memory": {MemoryMB: &minus}, "memory_max": {MemoryMaxMB: &minus}, "cores": {Cores: &minus}} {
		id, group := "j", "g"
		_, err := ParseTask(&api.Job{ID: &id}, &api.TaskGroup{Name: &group}, &api.Task{Name: "t", Driver: "docker", Resources: r}, 2100)
		if err == nil || err.Error() != "job j, group g, task t: resources "+name+" = -100 is negative" {
			t.Errorf("negative %s: %v", name, err)
		}
	}
}
