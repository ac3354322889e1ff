package swarm

import (
	"testing"

	"github.com/moby/moby/api/types/container"

	"github.com/orchbench/orchbench/harness/contract"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
)

// The weights are the kubelet's for the same declaration, so Swarm's
// tasks weigh against each other as Kubernetes' do.
func TestSharesForIsTheKubeletsWeight(t *testing.T) {
	for _, c := range []struct {
		cores float64
		want  int64
	}{
		{0, 0},      // no declaration: Docker's default stays
		{0.03, 30},  // 30m → 30720/1000
		{0.5, 512},  // 500m
		{1, 1024},   // one core
		{0.001, 2},  // 1m → 1, raised to the kernel's least
		{0.0004, 2}, // below a millicore: rounded up to 1m, as the Kubernetes adapter refuses below
		{300, 262144},
	} {
		if got := sharesFor(c.cores); got != c.want {
			t.Errorf("sharesFor(%g) = %d, want %d", c.cores, got, c.want)
		}
	}
}

func TestPolicyUpdateSetsWeightAndRemovesSwap(t *testing.T) {
	capped := &translate.Service{Declared: contract.Task{Cores: 0.03, MemoryMiB: 256}}
	mem := int64(256 << 20)
	// Swarm's task as created: default weight, swap as much again
	up, need := policyUpdate(capped, &container.HostConfig{Resources: container.Resources{CPUShares: 0, Memory: mem, MemorySwap: 2 * mem}})
	if !need || up.CPUShares != 30 || up.Memory != mem || up.MemorySwap != mem {
		t.Fatalf("fresh task: need %v, update %+v", need, up)
	}
	// aligned already: nothing to do, so a reused deployment is not touched
	if up, need := policyUpdate(capped, &container.HostConfig{Resources: container.Resources{CPUShares: 30, Memory: mem, MemorySwap: mem}}); need {
		t.Fatalf("aligned task updated again: %+v", up)
	}
	// a shares-mode task (no cap) weighs its declared weight, and without a
	// memory limit there is no swap limit to set
	shares := &translate.Service{Declared: contract.Task{CPUMode: contract.CPUModeShares, WeightCores: 0.5}}
	up, need = policyUpdate(shares, &container.HostConfig{Resources: container.Resources{CPUShares: 1024}})
	if !need || up.CPUShares != 512 || up.Memory != 0 || up.MemorySwap != 0 {
		t.Fatalf("shares-mode task: need %v, update %+v", need, up)
	}
	// nothing declared: Docker's defaults are what every orchestrator gives
	if up, need := policyUpdate(&translate.Service{}, &container.HostConfig{Resources: container.Resources{CPUShares: 0}}); need {
		t.Fatalf("undeclared task updated: %+v", up)
	}
}
