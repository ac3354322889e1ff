package sweep

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/limits"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// LimitsGate compares every task's enforced limits with what its variant declares.
func LimitsGate(lims []orchestrator.Limits) results.Gate {
	if len(lims) == 0 {
		return results.Gate{Name: GateLimits, Detail: "no task found to read limits from"}
	}
	var bad, ok []string
	for _, l := range lims {
		desc := fmt.Sprintf("%s/%s: %.3g cores, %d MiB", l.Group, l.Task, l.EffectiveCores, l.MemoryLimitMiB)
		switch {
		case l.DeclaredCores > 0 && !limits.Equal(l.EffectiveCores, l.DeclaredCores):
			bad = append(bad, fmt.Sprintf("%s/%s enforces %.3f cores, the variant declares %.3f", l.Group, l.Task, l.EffectiveCores, l.DeclaredCores))
		case l.DeclaredMemoryMiB > 0 && l.MemoryLimitMiB != l.DeclaredMemoryMiB:
			bad = append(bad, fmt.Sprintf("%s/%s enforces %d MiB, the variant declares %d", l.Group, l.Task, l.MemoryLimitMiB, l.DeclaredMemoryMiB))
		default:
			ok = append(ok, desc)
		}
	}
	if len(bad) > 0 {
		return results.Gate{Name: GateLimits, Detail: strings.Join(bad, "; ")}
	}
	return results.Gate{Name: GateLimits, Passed: true, Detail: strings.Join(ok, "; ")}
}
