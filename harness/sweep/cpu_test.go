package sweep

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/testenv"
)

func TestWindowPrefersSamplesInsideTheMeasuredPeriod(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var us []limits.Usage
	for i := 0; i <= 20; i++ { // one a second, 1 core busy from 5 s on
		cpu := time.Duration(max(0, i-5)) * time.Second
		us = append(us, limits.Usage{At: t0.Add(time.Duration(i) * time.Second), CPU: cpu})
	}
	first, last, ok := window(us, t0.Add(5500*time.Millisecond), t0.Add(15500*time.Millisecond))
	if !ok || !first.At.Equal(t0.Add(6*time.Second)) || !last.At.Equal(t0.Add(15*time.Second)) {
		t.Fatalf("inside: %v..%v %v", first.At, last.At, ok)
	}
	if cores, _ := first.Between(last); cores != 1 {
		t.Fatalf("a busy core measured as %.3f", cores)
	}
	// A window shorter than the sampling interval is bracketed instead.
	first, last, ok = window(us, t0.Add(7200*time.Millisecond), t0.Add(7700*time.Millisecond))
	if !ok || !first.At.Equal(t0.Add(7*time.Second)) || !last.At.Equal(t0.Add(8*time.Second)) {
		t.Fatalf("bracket: %v..%v %v", first.At, last.At, ok)
	}
	if _, _, ok := window(us[:1], t0, t0.Add(time.Second)); ok {
		t.Fatal("one sample cannot make a window")
	}
}

// The sampler reads real cgroups: this test process burns CPU in its own
// cgroup and the sampler must see about one busy core.
func TestCPUSamplerMeasuresOwnCgroup(t *testing.T) {
	e, err := limits.ForPID(os.Getpid())
	if err != nil {
		testenv.Missing(t, "no readable cgroup: %v", err)
	}
	lims := []orchestrator.Limits{{Instance: orchestrator.Instance{Task: "self", Declared: contract.Task{Cores: 4}}, EffectiveCores: 4, CgroupPath: e.CgroupPath}}
	s := startCPUSampler(lims, 100*time.Millisecond, nil)
	from := time.Now()
	for time.Since(from) < 600*time.Millisecond {
	}
	to := time.Now()
	cpu := s.finish(from, to)
	if len(cpu) != 1 {
		t.Fatalf("got %+v", cpu)
	}
	// The test binary shares its cgroup with everything else here, so
	// only a floor is certain.
	if cpu[0].Cores < 0.5 || cpu[0].Utilization != cpu[0].Cores/4 || cpu[0].WindowSeconds <= 0 {
		t.Fatalf("spinning one core measured as %+v", cpu[0])
	}
}

// The social network's front end uses next to no CPU: divided by it, the
// throughput read "2069 rps per core used (0.00 cores)". The step records
// no ratio under results.MinRatioCores, and the application's figure counts
// every task, its stores apart.
func TestPerCoreFiguresCountTheWholeApplication(t *testing.T) {
	cpu := []results.TaskCPU{
		{Task: "frontend", AllocID: "fe1", Cores: 0.004},
		{Task: "compose-post", AllocID: "cp1", Cores: 0.8},
		{Task: "home-timeline", AllocID: "ht1", Cores: 0.6},
		{Task: "redis", AllocID: "r1", Cores: 0.3, Datastore: true},
		{Task: "ferretdb", AllocID: "f1", Cores: 0.2, Datastore: true},
	}
	sr := results.StepResult{AchievedRPS: 200}
	serviceCPU(&sr, cpu, []orchestrator.Endpoint{{Instance: "fe1"}})
	if sr.ServiceCores != 0.004 || sr.QPSPerCore != 0 {
		t.Errorf("front end: %.3f cores, %g rps per core; want no ratio under %g cores", sr.ServiceCores, sr.QPSPerCore, results.MinRatioCores)
	}
	if math.Abs(sr.AppCores-1.904) > 1e-9 || math.Abs(sr.DatastoreCores-0.5) > 1e-9 || math.Abs(sr.QPSPerAppCore-200/1.904) > 1e-9 {
		t.Errorf("application: %g cores, %g in datastores, %g rps per core", sr.AppCores, sr.DatastoreCores, sr.QPSPerAppCore)
	}
	line := perCoreLine(sr)
	want := ", rps per core of the measured service n/a (0.004 cores), 105 rps per core of the application (1.90 cores, 0.50 in datastores)"
	if line != want {
		t.Errorf("step line %q, want %q", line, want)
	}

	// Behind a Kubernetes node port no endpoint names an instance: the
	// service's figure is unknown, the application's is not.
	sr = results.StepResult{AchievedRPS: 200}
	serviceCPU(&sr, cpu, []orchestrator.Endpoint{{Address: "127.0.0.1", Port: 30080, Entry: orchestrator.EntryNodePort}})
	if sr.ServiceCores != 0 || sr.QPSPerAppCore == 0 || perCoreLine(sr) != ", 105 rps per core of the application (1.90 cores, 0.50 in datastores)" {
		t.Errorf("node port: %+v, line %q", sr, perCoreLine(sr))
	}

	// an idle application divides nothing either
	sr = results.StepResult{AchievedRPS: 200}
	serviceCPU(&sr, []results.TaskCPU{{Task: "web", AllocID: "w", Cores: 0.006}}, []orchestrator.Endpoint{{Instance: "w"}})
	if sr.QPSPerCore != 0 || sr.QPSPerAppCore != 0 || !strings.Contains(perCoreLine(sr), "rps per core of the application n/a (0.006 cores)") {
		t.Errorf("idle: %+v, line %q", sr, perCoreLine(sr))
	}
}

// A task the pack declares a datastore is marked so in the step's figures.
func TestCPUSamplerMarksDatastores(t *testing.T) {
	t0 := time.Now()
	s := &cpuSampler{lims: []orchestrator.Limits{
		{Instance: orchestrator.Instance{Task: "redis", Declared: contract.Task{Role: contract.RoleDatastore}}},
		{Instance: orchestrator.Instance{Task: "web", Declared: contract.Task{Role: contract.RoleService}}},
	}, stop: make(chan struct{}), done: make(chan struct{})}
	for i := range s.lims {
		s.samples = append(s.samples, []limits.Usage{{At: t0, CPU: 0}, {At: t0.Add(10 * time.Second), CPU: time.Duration(i+1) * time.Second}})
	}
	close(s.done)
	byTask := map[string]results.TaskCPU{}
	for _, c := range s.finish(t0, t0.Add(10*time.Second)) {
		byTask[c.Task] = c
	}
	if !byTask["redis"].Datastore || byTask["web"].Datastore || byTask["redis"].Cores != 0.1 {
		t.Fatalf("%+v", byTask)
	}
}

// The application must be idle before a load: a task spinning in its
// cgroup (a backlog being drained) holds the step back until the bound and
// fails it; idle, the step goes on at the first read.
func TestSettleWaitsForTheApplicationToGoIdle(t *testing.T) {
	e, err := limits.ForPID(os.Getpid())
	if err != nil {
		testenv.Missing(t, "no readable cgroup: %v", err)
	}
	task := func(declared float64) []orchestrator.Limits {
		return []orchestrator.Limits{{Instance: orchestrator.Instance{ID: "a1b2c3d4e5", Task: "compose-review", Declared: contract.Task{Cores: declared}}, CgroupPath: e.CgroupPath}}
	}
	r := &Runner{SettleBound: 1500 * time.Millisecond}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	began := time.Now()
	g := r.settle(context.Background(), task(0.02))
	close(stop)
	if g.Passed || g.NotChecked || !strings.Contains(g.Detail, "compose-review a1b2c3d4 used") || time.Since(began) < 1500*time.Millisecond {
		t.Fatalf("a spinning task: %+v after %s", g, time.Since(began))
	}
	// Declared 8 cores: the shared cgroup of this test binary can never
	// use a quarter of them on this machine, so it reads idle.
	began = time.Now()
	if g := r.settle(context.Background(), task(8)); !g.Passed || time.Since(began) > time.Second {
		t.Fatalf("an idle task: %+v after %s", g, time.Since(began))
	}
	if g := r.settle(context.Background(), []orchestrator.Limits{{Instance: orchestrator.Instance{Task: "gone"}}}); !g.NotChecked {
		t.Fatalf("no cgroup to read: %+v", g)
	}
}
