package sweep

import (
	"os"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
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
	s := startCPUSampler(lims, 100*time.Millisecond)
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
