package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/results"
)

// newResultsCPUCmd prints where a sweep's requests spent CPU: the table
// `just bench-social` ends with.
func newResultsCPUCmd(dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "cpu SWEEP",
		Short: "Print each task's CPU per request for every configuration and level of a sweep (ID or name: newest run)",
		Long: `For every configuration and load level, the median over measured
repetitions of each task's CPU milliseconds per achieved request (all its
instances together, from their cgroups), most expensive first, with the
datastores marked, and the busiest task's share of the application's CPU.
Run at saturation (a closed loop without a CPU cap), it names the task an
application's capacity is.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := results.Archive{Dir: *dir}
			id, err := a.Resolve(args[0])
			if err != nil {
				return err
			}
			steps, err := a.LoadSteps(id)
			if err != nil {
				return err
			}
			rows := results.CPUPerRequest(steps)
			if len(rows) == 0 {
				return fmt.Errorf("sweep %s has no measured step with per-task CPU", id)
			}
			return results.FormatRequestCPU(cmd.OutOrStdout(), rows)
		},
	}
}
