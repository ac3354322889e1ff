package main

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/orchbench/orchbench/harness/conformance"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/spf13/cobra"
)

func newPackCheckCmd() *cobra.Command {
	var nomadBin string
	cmd := &cobra.Command{
		Use:   "check [PACK...]",
		Short: "Check packs against orchbench's conventions (every pack when none is named)",
		Long: `Render every variant and driver of a pack, have Nomad parse each job
(offline, with nomad job run -output), and check what the harness relies on:
the orchbench_* meta contract, a probe that fails on an empty answer, a
health-checked measured service, vertical twice baseline, horizontal at
baseline size with more instances, scale and resource_scale applied, CPU
limits that the driver really enforces, and bad values failing with the
valid choices. The same checks run in ` + "`just test`" + ` over packs/*.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if nomadBin == "" {
				var err error
				if nomadBin, err = exec.LookPath("nomad"); err != nil {
					return fmt.Errorf("--nomad: no nomad binary on PATH (./justw tools installs it into .tools/bin)")
				}
			}
			dirs := args
			if len(dirs) == 0 {
				found, _ := filepath.Glob(filepath.Join(pack.RegistryDir, "*", "metadata.hcl"))
				for _, m := range found {
					dirs = append(dirs, filepath.Dir(m))
				}
				if len(dirs) == 0 {
					return fmt.Errorf("no packs under ./%s; name a pack directory", pack.RegistryDir)
				}
			}
			c := conformance.Checker{Nomad: nomadBin}
			bad := 0
			for _, arg := range dirs {
				dir, err := pack.Find(arg)
				if err != nil {
					return err
				}
				r, err := c.Check(dir)
				if err != nil {
					return err
				}
				for _, f := range r.Findings {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				bad += len(r.Findings)
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d findings; variants %v, drivers %v, %d combinations rendered and parsed\n",
					r.Pack, len(r.Findings), r.Variants, r.Drivers, r.Renders)
			}
			if bad > 0 {
				cmd.SilenceUsage = true
				return fmt.Errorf("%d findings", bad)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&nomadBin, "nomad", "", "the nomad `binary` that parses rendered jobs (default: nomad on PATH)")
	return cmd
}
