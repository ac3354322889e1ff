package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// kubernetesEntry is what the Kubernetes adapter lists for the measured
// service: the NodePort, then its two pods behind it.
var kubernetesEntry = []orchestrator.Endpoint{
	{Address: "127.0.0.1", Port: 30080, Entry: orchestrator.EntryNodePort},
	{Address: "10.244.0.11", Port: 8080, Instance: "web-a", Via: orchestrator.EntryNodePort},
	{Address: "10.244.0.12", Port: 8080, Instance: "web-b", Via: orchestrator.EntryNodePort},
}

// Behind a NodePort the load goes to the NodePort alone, which spreads it
// over the pods: the pods listed for the probe and the CPU are not targets.
func TestLoadArgsAimOnlyAtTheEntryOfPodsBehindIt(t *testing.T) {
	st := experiment.Step{OfferedRPS: 100, Duration: 5 * time.Second, Load: experiment.Load{Threads: 2, Connections: 8}}
	args := strings.Join(loadArgs(&results.SweepRecord{Seed: 1}, st, kubernetesEntry), " ")
	if strings.Contains(args, "--hosts") || strings.Contains(args, "10.244.0.") {
		t.Errorf("the load is aimed past the NodePort at the pods: %q", args)
	}
}

// The service's CPU behind a NodePort is its pods' CPU: the entry has no
// instance of its own, and another service's task is not counted.
func TestServiceCPUBehindANodePortCountsEveryPod(t *testing.T) {
	sr := results.StepResult{AchievedRPS: 100}
	serviceCPU(&sr, []results.TaskCPU{{AllocID: "web-a", Cores: 0.3}, {AllocID: "web-b", Cores: 0.2}, {AllocID: "db-0", Cores: 1}}, kubernetesEntry)
	if sr.ServiceCores != 0.5 || sr.QPSPerCore != 200 {
		t.Errorf("service cores %g, qps per core %g; want 0.5 and 200", sr.ServiceCores, sr.QPSPerCore)
	}
}
