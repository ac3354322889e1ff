package sweep

import (
	"fmt"

	"github.com/orchbench/orchbench/harness/gates"
	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/toolload"
)

// toolCPUOf cuts a runner's readings of its tool to the measured window,
// as the service's are cut.
func toolCPUOf(run *orchestrator.ToolRun, res *loadgen.Result) gates.ToolCPU {
	switch {
	case run == nil:
		return gates.ToolCPU{Unknown: "its runner does not watch it from outside"}
	case run.CPUError != "":
		return gates.ToolCPU{Unknown: run.CPUError, LimitCores: run.LimitCores}
	case res == nil:
		return gates.ToolCPU{Unknown: "no result says when the measured window was", LimitCores: run.LimitCores}
	}
	first, last, ok := window(run.CPU, res.Start, res.End)
	if !ok {
		return gates.ToolCPU{Unknown: fmt.Sprintf("%d readings of its CPU, too few to span the measured window", len(run.CPU)), LimitCores: run.LimitCores, Source: run.CPUSource}
	}
	cores, throttled := first.Between(last)
	return gates.ToolCPU{Cores: cores, WindowSeconds: last.At.Sub(first.At).Seconds(), LimitCores: run.LimitCores,
		Quota: last.Periods > first.Periods, Throttled: throttled, Source: run.CPUSource}
}

// toolGeneratorGate records with the step what the tool's runner saw and
// the tool's CPU over the measured window, and judges it.
func toolGeneratorGate(sr *results.StepResult, tool string, run *orchestrator.ToolRun, res *loadgen.Result, generatorCores float64, svc gates.ServiceUse) results.Gate {
	cpu := toolCPUOf(run, res)
	sr.Metadata["tool_cpu"] = cpu
	if run != nil {
		sr.Metadata["tool_run"] = run
	}
	toolMax := 0.0
	if t, err := toolload.Lookup(tool); err == nil {
		toolMax = toolload.Ceiling(t, res)
	}
	return gates.ToolGeneratorGate(tool, cpu, generatorCores, toolMax, svc)
}
