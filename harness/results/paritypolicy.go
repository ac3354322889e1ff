package results

import (
	"fmt"
	"strings"
)

// The limits rows of parity hold what caps a task (its quota and memory
// limit, and how many instances of it ran); the policy rows what decides
// its share of a contended node: the CPU weight, the CPUs a quota is
// spread over, the swap it may use. Orchestrators translate one
// declaration into different weights and swap settings (Nomad's shares are
// its MHz, Kubernetes' its millicores), so the same caps can still run
// under different policies, and the row flags that.

// instanceCounts words how many instances of each group/task a step's
// limits record lists.
func instanceCounts(lims []parityLimits) map[string]string {
	n := map[string]int{}
	for _, l := range lims {
		n[l.Group+"/"+l.Task]++
	}
	out := map[string]string{}
	for name, c := range n {
		if c == 1 {
			out[name] = "1 instance"
		} else {
			out[name] = fmt.Sprintf("%d instances", c)
		}
	}
	return out
}

// policyText is one instance's CPU weight, cpuset under a quota and swap,
// "" for a record archived before they were read.
func policyText(l parityLimits) string {
	var parts []string
	switch {
	case l.CPUWeight == 0:
	case l.CgroupVersion == 2:
		parts = append(parts, fmt.Sprintf("cpu.weight %d", l.CPUWeight))
	default:
		parts = append(parts, fmt.Sprintf("cpu.shares %d", l.CPUWeight))
	}
	// without a quota the cpuset is the cap, which the limits row shows
	if l.QuotaCores > 0 && l.CPUSetSize > 0 {
		parts = append(parts, fmt.Sprintf("quota spread over %d CPUs", l.CPUSetSize))
	}
	if l.SwapAccounted != nil {
		parts = append(parts, swapText(*l.SwapAccounted, l.SwapLimitBytes))
	}
	return strings.Join(parts, ", ")
}

func swapText(accounted bool, bytes int64) string {
	switch {
	case !accounted:
		return "swap not accounted by the kernel"
	case bytes < 0:
		return "swap unlimited"
	case bytes == 0:
		return "no swap"
	}
	return fmt.Sprintf("swap %d MiB", bytes>>20)
}

// shippingText is what the node agent shipped during the step: with
// shipping on, the agent runs beside every orchestrator's tasks, but it
// tails only Nomad's allocation logs (docs/shipping.md), so on another
// orchestrator it does less work, and a comparison of orchestrators with
// shipping on compares different work.
func shippingText(r StepResult) (string, bool) {
	s, ok := ShippingOf(r)
	switch {
	case !ok:
		return "", false
	case s.Mode == "off":
		return "off", true
	case s.Undeclared:
		return "not declared, no agent on the cluster", true
	case s.Agent == "":
		return "on, but no agent ran", true
	case len(s.Jobs) > 0:
		return "on: the agent ships the task logs", true
	}
	return "on: the agent runs but ships none of these task logs", true
}
