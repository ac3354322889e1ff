package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/experiment"
	"github.com/orchbench/orchbench/harness/results"
	"github.com/orchbench/orchbench/harness/studies"
	"github.com/orchbench/orchbench/harness/vmpush"
)

func init() {
	cmd := &cobra.Command{
		Use:   "results",
		Short: "List, show and push archived sweep results",
	}
	var dir string
	cmd.PersistentFlags().StringVar(&dir, "dir", "results", "results archive `directory`")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the sweeps in the archive",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sweeps, err := results.Archive{Dir: dir}.ListSweeps()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SWEEP\tNAME\tSTARTED\tSTEPS DONE")
			for _, s := range sweeps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\n", s.ID, s.Name, s.Start.UTC().Format("2006-01-02 15:04:05Z"), s.Completed, s.Planned)
			}
			return tw.Flush()
		},
	}

	var asJSON bool
	show := &cobra.Command{
		Use:   "show SWEEP",
		Short: "Print per-level statistics and breaking points of a sweep (ID or name: newest run)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := results.Archive{Dir: dir}
			id, err := a.Resolve(args[0])
			if err != nil {
				return err
			}
			rec, err := a.LoadSweep(id)
			if err != nil {
				return err
			}
			steps, err := a.LoadSteps(id)
			if err != nil {
				return err
			}
			if !asJSON {
				if err := results.FormatShow(cmd.OutOrStdout(), rec, steps); err != nil {
					return err
				}
				if t := studies.Headline(rec, steps); t != nil {
					return t.WriteText(cmd.OutOrStdout())
				}
				return nil
			}
			slo := experiment.SLO{}
			if rec.Spec != nil {
				slo = rec.Spec.SLO
			}
			levels := results.Summarize(steps, slo)
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{
				"sweep":           id,
				"slo":             slo,
				"levels":          levels,
				"breaking_points": results.WithSustained(results.BreakingPoints(levels), steps, slo),
			})
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print statistics and breaking points as JSON")

	var vmURL string
	push := &cobra.Command{
		Use:   "push SWEEP",
		Short: "Push a sweep's completed steps to VictoriaMetrics (safe to repeat)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := results.Archive{Dir: dir}
			id, err := a.Resolve(args[0])
			if err != nil {
				return err
			}
			n, err := vmpush.PushSweep(cmd.Context(), a, id, vmURL)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pushed %d samples of sweep %s to %s\n", n, id, vmURL)
			return nil
		},
	}
	push.Flags().StringVar(&vmURL, "vm", vmpush.VMURL(), "VictoriaMetrics base `URL` (default from $ORCHBENCH_VM_URL)")

	cmd.AddCommand(list, show, push, newResultsCPUCmd(&dir))
	rootCmd.AddCommand(cmd)
}
