// Command orchbench deploys packs, drives them with wrk2-style load, and stores
// verified results. Each subcommand lives in its own file and registers itself
// on rootCmd from an init function.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "orchbench",
	Short:         "Benchmark testbed for microservices on Nomad, Swarm and Kubernetes",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "orchbench:", err)
		os.Exit(1)
	}
}
