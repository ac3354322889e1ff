package swarm

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/moby/moby/api/types/swarm"
	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	tt "github.com/orchbench/orchbench/harness/orchestrator/translate/translatetest"
)

func mustTranslate(t *testing.T, job *api.Job, opts Options) *Plan {
	t.Helper()
	p, err := Translate(job, opts)
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	return p
}

func spec(t *testing.T, p *Plan, name string) swarm.ServiceSpec {
	t.Helper()
	s, ok := p.Specs[name]
	if !ok {
		t.Fatalf("no spec for %s (have %d)", name, len(p.Specs))
	}
	return s
}

func hasRemark(p *Plan, stanza, kind string) bool {
	for _, r := range p.Remarks {
		if r.Stanza == stanza && r.Kind == kind {
			return true
		}
	}
	return false
}

// checkResources: limits and reservations are both exactly the declaration.
func checkResources(t *testing.T, name string, res *swarm.ResourceRequirements, d Declaration) {
	t.Helper()
	nano, mem := int64(d.Cores*1e9), int64(d.MemoryMiB)<<20
	if nano == 0 && mem == 0 {
		if res.Limits != nil || res.Reservations != nil {
			t.Errorf("%s: nothing declared, limits %+v reservations %+v", name, res.Limits, res.Reservations)
		}
		return
	}
	if res.Limits == nil || res.Reservations == nil ||
		res.Limits.NanoCPUs != nano || res.Reservations.NanoCPUs != nano || res.Limits.MemoryBytes != mem || res.Reservations.MemoryBytes != mem {
		t.Errorf("%s: limits %+v reservations %+v, declared %s", name, res.Limits, res.Reservations, describe(d))
	}
}

func TestSpecTaewa(t *testing.T) {
	p := mustTranslate(t, tt.Taewa(), Options{MHzPerCore: 2100})
	if p.Network != "orchbench-taewa-vertical" || len(p.Specs) != 1 {
		t.Fatalf("network %q, %d specs", p.Network, len(p.Specs))
	}
	s := spec(t, p, "taewa-vertical-taewa")
	cs := s.TaskTemplate.ContainerSpec
	if s.Name != "taewa-vertical-taewa" || cs.Image != "orchbench/taewa:local" || !reflect.DeepEqual(cs.Env, []string{"PORT=8080"}) || cs.Args != nil || cs.Command != nil {
		t.Errorf("service %q container: image %q env %q args %q command %q", s.Name, cs.Image, cs.Env, cs.Args, cs.Command)
	}
	if *s.Mode.Replicated.Replicas != 2 {
		t.Errorf("replicas %d", *s.Mode.Replicated.Replicas)
	}
	// the adapter checks from outside the container; the image's own check is off
	if hc := cs.Healthcheck; hc == nil || !reflect.DeepEqual(hc.Test, []string{"NONE"}) {
		t.Errorf("container health check: %+v", cs.Healthcheck)
	}
	checkResources(t, s.Name, s.TaskTemplate.Resources, Declaration{Cores: 0.5, MemoryMiB: 256, CPUMode: contract.CPUModeQuota})
	if s.EndpointSpec.Mode != swarm.ResolutionModeDNSRR {
		t.Errorf("endpoint mode %q", s.EndpointSpec.Mode)
	}
	wantPorts := []swarm.PortConfig{{Protocol: "tcp", TargetPort: 8080, PublishedPort: 0, PublishMode: swarm.PortConfigPublishModeHost}}
	if !reflect.DeepEqual(s.EndpointSpec.Ports, wantPorts) {
		t.Errorf("entry ports %+v", s.EndpointSpec.Ports)
	}
	// the Consul name is an alias on the job's own network: two jobs of one app both have it
	if n := s.TaskTemplate.Networks; len(n) != 1 || n[0].Target != "orchbench-taewa-vertical" || !reflect.DeepEqual(n[0].Aliases, []string{"taewa"}) {
		t.Errorf("networks %+v", n)
	}
	for _, labels := range []map[string]string{s.Labels, cs.Labels} {
		if labels[LabelJob] != "taewa-vertical" || labels[LabelGroup] != "taewa" || labels[LabelTask] != "taewa" || labels[LabelService] != s.Name ||
			labels[LabelVersion] != p.Version || p.Version == "" {
			t.Errorf("labels %v (version %q)", labels, p.Version)
		}
	}
	if rp := s.TaskTemplate.RestartPolicy; rp == nil || rp.Condition != swarm.RestartPolicyConditionAny || *rp.MaxAttempts != 2 || *rp.Window != time.Minute || *rp.Delay != 2*time.Second {
		t.Errorf("restart policy %+v", rp)
	}
	if u := s.UpdateConfig; u.Parallelism != 2 || u.Order != swarm.UpdateOrderStopFirst || u.FailureAction != swarm.UpdateFailureActionContinue {
		t.Errorf("update %+v", u)
	}
	if cs.StopGracePeriod == nil || *cs.StopGracePeriod != 5*time.Second || len(cs.Mounts) != 0 || s.TaskTemplate.Placement != nil {
		t.Errorf("stop grace %v, mounts %+v, placement %+v", cs.StopGracePeriod, cs.Mounts, s.TaskTemplate.Placement)
	}
	// Swarm's own difference is said beside the translator's remarks
	if !hasRemark(p, "restart", translate.RemarkDiffers) || !hasRemark(p, "update", translate.RemarkIgnored) {
		t.Errorf("remarks %v", p.Remarks)
	}
}

func TestSpecSocialNetwork(t *testing.T) {
	p := mustTranslate(t, tt.SocialNetwork(), Options{})
	ferret := spec(t, p, "sn-ferretdb")
	m := ferret.TaskTemplate.ContainerSpec.Mounts
	if len(m) != 1 || m[0].Type != "volume" || m[0].Target != "/alloc/data" || m[0].Source != "sn-ferretdb-data-"+p.Service("sn-ferretdb").Version()+"-{{.Task.Slot}}" ||
		m[0].VolumeOptions.Labels[LabelJob] != "sn" || m[0].VolumeOptions.Labels[LabelService] != "sn-ferretdb" {
		t.Errorf("ferretdb mounts %+v", m)
	}
	if m := spec(t, p, "sn-redis").TaskTemplate.ContainerSpec.Mounts; len(m) != 0 {
		t.Errorf("redis, which does not use the alloc dir, mounts %+v", m)
	}
	// shares: memory capped, CPU not
	checkResources(t, "ferretdb", ferret.TaskTemplate.Resources, Declaration{MemoryMiB: 512, CPUMode: contract.CPUModeShares})
	user := spec(t, p, "sn-user")
	checkResources(t, "user", user.TaskTemplate.Resources, Declaration{Cores: 1, MemoryMiB: 512, CPUMode: contract.CPUModeQuota})
	wantEnv := []string{
		"MACHINE_ID={{.Task.Slot}}",
		"MONGODB_URI=mongodb://sn-ferretdb:8000/",
		"PLAIN=value",
		"REDIS_ADDR=sn-redis:8000",
		"USER_ADDR=sn-user:8000",
	}
	if got := user.TaskTemplate.ContainerSpec.Env; !reflect.DeepEqual(got, wantEnv) {
		t.Errorf("user env\n got %q\nwant %q", got, wantEnv)
	}
	if len(user.EndpointSpec.Ports) != 0 || len(spec(t, p, "sn-frontend").EndpointSpec.Ports) != 1 {
		t.Errorf("published: user %+v, frontend %+v", user.EndpointSpec.Ports, spec(t, p, "sn-frontend").EndpointSpec.Ports)
	}
	// the service name is the Consul name here: no alias repeats it
	if n := user.TaskTemplate.Networks; len(n) != 1 || n[0].Target != "orchbench-sn" || len(n[0].Aliases) != 0 {
		t.Errorf("user networks %+v", n)
	}
	for _, stanza := range []string{"ephemeral_disk", "${NOMAD_ALLOC_INDEX}"} {
		if !hasRemark(p, stanza, translate.RemarkDiffers) {
			t.Errorf("no Swarm remark for %s in %v", stanza, p.Remarks)
		}
	}
}

func TestSpecEnvAndCommand(t *testing.T) {
	j := tt.Taewa()
	g := j.TaskGroups[0]
	g.Services = append(g.Services, &api.Service{Name: "taewa-admin", PortLabel: "http"})
	g.Constraints = []*api.Constraint{{Operand: "distinct_hosts"}}
	task := g.Tasks[0]
	task.Env["ADMIN"] = "${NOMAD_ADDR_http} {{literal}} #${NOMAD_ALLOC_INDEX}"
	task.Config["entrypoint"] = []any{"/bin/sh", "-c"}
	task.Config["command"] = "node"
	task.Config["args"] = []any{"server.js", "${NOMAD_PORT_http}"}
	p := mustTranslate(t, j, Options{})
	s := spec(t, p, "taewa-vertical-taewa")
	cs := s.TaskTemplate.ContainerSpec
	// literal braces are escaped from Swarm's templates; the index is the slot
	if want := []string{`ADMIN=0.0.0.0:8080 {{"{{"}}literal}} #{{.Task.Slot}}`, "PORT=8080"}; !reflect.DeepEqual(cs.Env, want) {
		t.Errorf("env %q, want %q", cs.Env, want)
	}
	if !reflect.DeepEqual(cs.Command, []string{"/bin/sh", "-c"}) || !reflect.DeepEqual(cs.Args, []string{"node", "server.js", "8080"}) {
		t.Errorf("command %q args %q", cs.Command, cs.Args)
	}
	if a := s.TaskTemplate.Networks[0].Aliases; !reflect.DeepEqual(a, []string{"taewa", "taewa-admin"}) {
		t.Errorf("aliases %q", a)
	}
	if pl := s.TaskTemplate.Placement; pl == nil || pl.MaxReplicas != 1 {
		t.Errorf("distinct_hosts: placement %+v", pl)
	}
}

// TestSpecFixtures builds the rendered packs' specs: each is what its
// service declares, and only the entry publishes.
func TestSpecFixtures(t *testing.T) {
	for _, f := range tt.Fixtures {
		job, err := f.Job()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Translate(job, Options{MHzPerCore: 2100})
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if len(p.Specs) != f.Services {
			t.Errorf("%s: %d specs", f.Name, len(p.Specs))
		}
		for _, svc := range p.Services {
			s := spec(t, p, svc.Name)
			checkResources(t, f.Name+" "+svc.Name, s.TaskTemplate.Resources, svc.Declared)
			if published := len(s.EndpointSpec.Ports) > 0; published != (svc.Name == f.Entry) {
				t.Errorf("%s: %s publishes %+v", f.Name, svc.Name, s.EndpointSpec.Ports)
			}
			for _, e := range s.TaskTemplate.ContainerSpec.Env {
				if strings.Contains(e, translate.AllocIndex) {
					t.Errorf("%s: %s: unexpanded %q", f.Name, svc.Name, e)
				}
			}
			// The pack's flags reach the container as on Nomad.
			c := s.TaskTemplate.ContainerSpec
			if strings.HasPrefix(c.Image, "orchbench/socialnet:") && !strings.Contains(strings.Join(c.Args, " "), "--rpc-connections 512 --rpc-timeout 10s --rpc-call-timeout 30s") {
				t.Errorf("%s: %s: args %q lack the Thrift pool's flags", f.Name, svc.Name, c.Args)
			}
		}
	}
}

// TestSpecRefusals: what Docker cannot enforce, and the translator's
// refusals, name Swarm.
func TestSpecRefusals(t *testing.T) {
	for _, c := range []struct {
		meta map[string]string
		want string
	}{
		{map[string]string{"orchbench_cores": "0.0001"}, "swarm: job taewa-vertical, group taewa, task taewa: 0.0001 cores is below Docker's minimum CPU quota"},
		{map[string]string{"orchbench_memory_mib": "5"}, "swarm: job taewa-vertical, group taewa, task taewa: 5 MiB is below Docker's minimum memory limit"},
		{map[string]string{"orchbench_cpu_mode": "cpuset"}, "swarm: job taewa-vertical, group taewa, task taewa: cpu mode cpuset (0.5 whole cores, an exclusive cpuset) cannot be honoured: Swarm enforces a CPU quota or nothing"},
	} {
		j := tt.Taewa()
		for k, v := range c.meta {
			j.Meta[k] = v
		}
		if _, err := Translate(j, Options{}); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: got %v\nwant %s...", c.meta, err, c.want)
		}
	}
}
