package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"
)

// loadjob is the entry point of the load-generator batch job
// (jobs/loadgen.nomad.hcl): Nomad passes the step's load flags as dispatch
// meta, which a docker task cannot spread into its argument list itself.
func init() {
	var out string
	cmd := &cobra.Command{
		Use:    "loadjob",
		Short:  "Run `orchbench load` with the flags in NOMAD_META_args (inside the load batch job)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var args []string
			raw := os.Getenv("NOMAD_META_args")
			if err := json.Unmarshal([]byte(raw), &args); err != nil || len(args) == 0 {
				return fmt.Errorf("NOMAD_META_args %q: want a JSON array of `orchbench load` arguments", raw)
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			load := exec.Command(self, append(append([]string{"load", "-o", out}, args[:len(args)-1]...), args[len(args)-1])...)
			load.Stdout, load.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return load.Run()
		},
	}
	cmd.Flags().StringVar(&out, "out", "/alloc/result.json", "where the JSON result goes")
	rootCmd.AddCommand(cmd)
}
