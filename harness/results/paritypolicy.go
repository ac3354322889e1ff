package results

import (
	"fmt"
	"math"
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
// "" for a record archived before they were read. The weight is read
// against the step's weight per declared core (weightScale): what decides
// a contended node is how the tasks weigh against each other, and that is
// equal when each weighs in proportion to its declared cores, whatever unit
// the orchestrator counts in (Nomad's MHz, Kubernetes' millicores).
func policyText(l parityLimits, scale float64) string {
	var parts []string
	if w := weightText(l, scale); w != "" {
		parts = append(parts, w)
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

func weightName(l parityLimits) string {
	if l.CgroupVersion == 2 {
		return "cpu.weight"
	}
	return "cpu.shares"
}

// weightText says whether the instance weighs in proportion to its
// declared cores, and its weight when it does not (or declares none).
func weightText(l parityLimits, scale float64) string {
	switch {
	case l.CPUWeight == 0:
		return ""
	case proportional(l, scale):
		return weightName(l) + " in proportion to the declared cores"
	case l.Declared.WeighedCores() > 0 && scale > 0:
		return fmt.Sprintf("%s %d, not in proportion to its %.3g declared cores (%.0f would be)", weightName(l), l.CPUWeight, l.Declared.WeighedCores(), scale*l.Declared.WeighedCores())
	}
	return fmt.Sprintf("%s %d", weightName(l), l.CPUWeight)
}

// proportional: the weight is the scale times the declared cores, within
// a unit of rounding (the kernel's least weight is 2) and 5 %.
func proportional(l parityLimits, scale float64) bool {
	if l.Declared.WeighedCores() <= 0 || scale <= 0 {
		return false
	}
	want := scale * l.Declared.WeighedCores()
	return math.Abs(float64(l.CPUWeight)-want) <= 1+0.05*want
}

// weightScale is a step's CPU weight per declared core, read off the
// instance declaring the most cores (its weight is the least rounded);
// the others are held to it. 0 when none declares cores.
func weightScale(lims []parityLimits) float64 {
	var ref *parityLimits
	for i, l := range lims {
		if l.CPUWeight > 0 && l.Declared.WeighedCores() > 0 && (ref == nil || l.Declared.WeighedCores() > ref.Declared.WeighedCores()) {
			ref = &lims[i]
		}
	}
	if ref == nil {
		return 0
	}
	return float64(ref.CPUWeight) / ref.Declared.WeighedCores()
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
