package translate

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/orchbench/orchbench/harness/contract"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
)

var kube = Target{Name: "Kubernetes", CPUModes: []contract.CPUMode{contract.CPUModeQuota, contract.CPUModeShares}, Network: "the pod network"}

// TestTargetNamesItself: a Kubernetes plan's errors and remarks speak of
// Kubernetes, never of Swarm.
func TestTargetNamesItself(t *testing.T) {
	for _, c := range refusals() {
		j := tt.Taewa()
		c.mutate(j)
		_, err := Translate(j, Options{Target: kube})
		if err == nil {
			t.Errorf("%s: no error for Kubernetes", c.name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "kubernetes: ") || !strings.Contains(msg, c.want) || strings.Contains(strings.ToLower(msg), "swarm") {
			t.Errorf("%s:\n got %v\nwant kubernetes: ...%s... and no Swarm", c.name, err, c.want)
		}
	}
	// the messages that name the target say its name
	for _, c := range []struct {
		mutate func(*api.Job)
		want   string
	}{
		{func(j *api.Job) { j.TaskGroups[0].Tasks[0].Driver = "exec" }, "only docker tasks become Kubernetes services"},
		{func(j *api.Job) { j.TaskGroups[0].Tasks[0].Env["X"] = "${NOMAD_HOST_PORT_http}" }, "which the Kubernetes adapter cannot provide"},
		{func(j *api.Job) { j.TaskGroups[0].Tasks[0].Config["args"] = []any{"${NOMAD_ALLOC_INDEX}"} }, "which Kubernetes can only give in env"},
		{func(j *api.Job) { j.TaskGroups[0].Networks[0].Mode = "cni/x" }, "host and bridge become the pod network"},
		{func(j *api.Job) { j.Meta["orchbench_cpu_mode"] = "cpuset" }, `Kubernetes enforces a CPU quota or nothing; declare meta orchbench_cpu_mode = "quota"`},
	} {
		j := tt.Taewa()
		c.mutate(j)
		if _, err := Translate(j, Options{Target: kube}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want ...%s...", err, c.want)
		}
	}
	// remarks too, on every rendered pack
	for _, f := range tt.Fixtures {
		job, err := f.Job()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Translate(job, Options{MHzPerCore: 2100, Target: kube})
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		named := 0
		for _, r := range p.Remarks {
			if strings.Contains(strings.ToLower(r.Why), "swarm") {
				t.Errorf("%s: remark %s", f.Name, r)
			}
			if strings.Contains(r.Why, "Kubernetes") || strings.Contains(r.Why, kube.Network) {
				named++
			}
		}
		if named == 0 {
			t.Errorf("%s: no remark names Kubernetes: %v", f.Name, p.Remarks)
		}
	}
}

// TestCPUSetRefused: neither Swarm nor Kubernetes (here) can give a task an
// exclusive cpuset, whether declared as a mode or implied by resources.cores;
// a target that lists the mode accepts it, so the rule is the target's.
func TestCPUSetRefused(t *testing.T) {
	cpuset := func(j *api.Job) { j.Meta["orchbench_cpu_mode"] = "cpuset"; j.Meta["orchbench_cores"] = "2" }
	cores := func(j *api.Job) { j.Meta = map[string]string{}; j.TaskGroups[0].Tasks[0].Resources.Cores = tt.Ptr(2) }
	for _, target := range []Target{swarmish, kube} {
		for name, mutate := range map[string]func(*api.Job){"meta": cpuset, "resources.cores": cores} {
			j := tt.Taewa()
			mutate(j)
			_, err := Translate(j, Options{MHzPerCore: 2100, Target: target})
			want := strings.ToLower(target.Name) + ": job taewa-vertical, group taewa, task taewa: cpu mode cpuset (2 whole cores, an exclusive cpuset) cannot be honoured: " + target.Name + " enforces a CPU quota or nothing"
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s, cpuset by %s: got %v\nwant %s...", target.Name, name, err, want)
			}
		}
	}
	pinned := Target{Name: "Pinned", CPUModes: []contract.CPUMode{contract.CPUModeCPUSet}}
	j := tt.Taewa()
	cpuset(j)
	p, err := Translate(j, Options{Target: pinned})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Services[0].Declared; d != (contract.Task{Cores: 2, MemoryMiB: 256, CPUMode: contract.CPUModeCPUSet}) {
		t.Errorf("declared %+v", d)
	}
	// and such a target refuses the quota it does not list
	if _, err := Translate(tt.Taewa(), Options{Target: pinned}); err == nil || !strings.Contains(err.Error(), `cpu mode "quota" cannot be honoured: Pinned enforces an exclusive cpuset`) {
		t.Errorf("a quota on a cpuset-only target: %v", err)
	}
}

func TestTargetRequired(t *testing.T) {
	if _, err := Translate(tt.Taewa(), Options{}); err == nil || !strings.Contains(err.Error(), "Target has no name") {
		t.Errorf("no target: %v", err)
	}
}
