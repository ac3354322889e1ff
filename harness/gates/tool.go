package gates

import (
	"fmt"
	"strings"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
)

// MaxToolCPUShare is the share of the CPU it could use past which a tool
// counts as saturated. A tool does not measure its own send lag, so its
// CPU is what tells whether it, rather than the service, set the pace.
const MaxToolCPUShare = 0.90

// ToolCPU is the CPU a study tool used over the measured window, from its
// runner's readings, and the cap it ran under; Unknown says why the cores
// are not known, when they are not.
type ToolCPU struct {
	Cores         float64 `json:"cores"`
	WindowSeconds float64 `json:"window_seconds"`
	LimitCores    float64 `json:"limit_cores,omitempty"`
	// Quota says the tool's cgroup enforced a CFS quota over the window;
	// Throttled is then the share of its periods in which the quota ran
	// out.
	Quota     bool    `json:"quota,omitempty"`
	Throttled float64 `json:"throttled,omitempty"`
	Source    string  `json:"source,omitempty"`
	Unknown   string  `json:"unknown,omitempty"`
}

// MaxToolThrottledShare is the share of CFS periods in which a tool's
// quota may run out before the tool counts as saturated whatever its
// average: a tool that used a little less than its cap over a short
// window, but was stopped by it in most periods, had sends waiting on the
// cap, and those sends are missing from the service's queue.
const MaxToolThrottledShare = 0.5

// capRounding is how much tighter than generator_cores the cap a tool ran
// under must be to be a ceiling of its own rather than its enforcement.
const capRounding = 0.95

// toolCeiling is the most CPU a tool could have used: the tightest of its
// declared generator_cores, its own ceiling (toolload.Tool.MaxCores) and
// the cap its runner read; what is 0 is unknown. It says which it is.
func toolCeiling(tool string, generatorCores, toolMax, limit float64) (float64, string) {
	best, what := 0.0, ""
	consider := func(cores float64, name string) {
		if cores > 0 && (best == 0 || cores < best) {
			best, what = cores, name
		}
	}
	consider(generatorCores, fmt.Sprintf("its generator_cores = %g", generatorCores))
	consider(toolMax, fmt.Sprintf("the %g core %s can use", toolMax, tool))
	// the quota enforcing generator_cores differs from it by the rounding
	// to the orchestrator's units: the declared figure names it
	if generatorCores == 0 || limit < capRounding*generatorCores {
		consider(limit, fmt.Sprintf("the %.3g cores it ran under", limit))
	}
	return best, what
}

// ToolGeneratorGate stands for GeneratorGate with a study tool, which does
// not measure its own send lag: a tool that used MaxToolCPUShare of the
// CPU it could use, while the service was not saturated, may have set the
// pace itself, and the step is invalid. With the service's quota spent the
// service set it however busy the tool was.
func ToolGeneratorGate(tool string, cpu ToolCPU, generatorCores, toolMax float64, svc ServiceUse) results.Gate {
	g := results.Gate{Name: Generator}
	if cpu.Unknown != "" {
		g.NotChecked = true
		g.Detail = fmt.Sprintf("%s's CPU was not measured (%s), so whether it saturated is unknown", tool, cpu.Unknown)
		return g
	}
	ceiling, what := toolCeiling(tool, generatorCores, toolMax, cpu.LimitCores)
	used := fmt.Sprintf("%s used %.3g cores over the %.1f s window", tool, cpu.Cores, cpu.WindowSeconds)
	if ceiling == 0 {
		g.NotChecked = true
		g.Detail = used + "; with no generator_cores declared, no ceiling of its own and no cap read, there is nothing to judge its saturation against"
		return g
	}
	share := cpu.Cores / ceiling
	desc := fmt.Sprintf("%s, %.0f %% of %s (bound %.0f %%)", used, 100*share, what, 100*MaxToolCPUShare)
	if cpu.Quota {
		desc += fmt.Sprintf(", throttled in %.0f %% of its CFS periods (bound %.0f %%)", 100*cpu.Throttled, 100*MaxToolThrottledShare)
	}
	switch {
	case share < MaxToolCPUShare && (!cpu.Quota || cpu.Throttled < MaxToolThrottledShare):
		g.Passed = true
		g.Detail = desc
	case svc.Saturated(SaturatedShare):
		g.Passed = true
		g.Detail = fmt.Sprintf("%s; the service used %.0f %% of its %.3g cores, so it, not %s, set the pace", desc, 100*svc.Used/svc.Limit, svc.Limit, tool)
	case svc.Limit > 0:
		g.Detail = fmt.Sprintf("%s saturated: %s, while the service used only %.3g of its %.3g cores (%.0f %%)", tool, desc, svc.Used, svc.Limit, 100*svc.Used/svc.Limit)
	default:
		g.Detail = fmt.Sprintf("%s saturated: %s, while the service used %.3g cores under no CPU quota it could have spent", tool, desc, svc.Used)
	}
	return g
}

// ToolEntryGate refuses a study tool aimed at a service reached at several
// addresses: Nomad and Swarm publish each instance on a host port of its
// own, and a tool takes one URL, so it would load one instance and the
// step would measure a service of one. A Kubernetes NodePort is one
// address that spreads connections over the instances itself.
func ToolEntryGate(tool string, eps []orchestrator.Endpoint) results.Gate {
	g := results.Gate{Name: ToolEntry}
	addrs := map[string]bool{}
	var list []string
	for _, ep := range eps {
		if a := ep.HostPort(); !addrs[a] {
			addrs[a] = true
			list = append(list, a)
		}
	}
	if len(list) > 1 {
		g.Detail = fmt.Sprintf("%s takes one URL, but the service has %d instances at %s: it would load only the first; use runner = \"orchbench\", which spreads connections over them, or a variant with one instance",
			tool, len(list), strings.Join(list, ", "))
		return g
	}
	g.Passed = true
	g.Detail = fmt.Sprintf("%s loads the service's one entry %s", tool, strings.Join(list, ""))
	if len(eps) > 0 && eps[0].Entry == orchestrator.EntryNodePort {
		g.Detail += " (a node port, which spreads connections over the instances)"
	}
	return g
}
