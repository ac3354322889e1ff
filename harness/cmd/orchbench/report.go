package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/report"
	"github.com/orchbench/orchbench/harness/results"
)

func init() {
	var dir, out string
	cmd := &cobra.Command{
		Use:   "report SWEEP",
		Short: "Write an HTML report with SVG charts for a sweep (ID or name: newest run)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			index, err := report.Write(results.Archive{Dir: dir}, args[0], out)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), index)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "results", "results archive `directory`")
	cmd.Flags().StringVar(&out, "out", "reports", "reports `directory`; the report goes to <out>/<sweep-id>/")
	rootCmd.AddCommand(cmd)
}
