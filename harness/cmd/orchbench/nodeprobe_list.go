package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// nodeProbeListCmd is `orchbench node-probe list`.
func nodeProbeListCmd() *cobra.Command {
	var names []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the node probes the orchestrators run, as a sweep finds them, and whether each answers for its node",
		Long: `list asks each orchestrator for its node-probe deployment (the Nomad system
job, the Swarm global service, the Kubernetes DaemonSet), as a sweep does
without --node-probe, and asks every probe found who it is. It fails when an
orchestrator cannot be asked, when none runs a probe, or when a probe does
not answer for its node.`,
		Example: `  orchbench node-probe list
  NOMAD_ADDR=http://10.77.0.11:4646 orchbench node-probe list --orchestrator nomad`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listNodeProbes(cmd.Context(), cmd, names)
		},
	}
	cmd.Flags().StringSliceVar(&names, "orchestrator", []string{"nomad"}, "orchestrators to ask (nomad, swarm, kubernetes)")
	return cmd
}

func listNodeProbes(ctx context.Context, cmd *cobra.Command, names []string) error {
	out := cmd.OutOrStdout()
	finders := map[string]orchestrator.ProbeFinder{}
	for _, n := range names {
		o, err := orchestrator.New(n, orchestrator.Config{})
		if err != nil {
			return err
		}
		pf, ok := o.(orchestrator.ProbeFinder)
		if !ok {
			return fmt.Errorf("orchestrator %s cannot say where its node probes are", n)
		}
		finders[n] = pf
	}
	clients, found, err := sweepFlags{}.probeClients(ctx, finders, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("no node probe runs on %s", strings.Join(names, ", "))
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tPROBE\tANSWERS")
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(clients)) {
		answer := "yes"
		if _, err := clients[name].Identity(ctx); err != nil {
			answer = err.Error()
			bad = append(bad, name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, clients[name].BaseURL, answer)
	}
	tw.Flush()
	if len(bad) > 0 {
		return fmt.Errorf("the probes of %s do not answer for their node", strings.Join(bad, ", "))
	}
	return nil
}
