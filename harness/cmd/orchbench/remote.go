package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/remote"
)

func init() {
	var inventory, bin, consulVersion, nomadVersion, orchbenchBin string
	root := &cobra.Command{
		Use:   "remote",
		Short: "Bring Consul, Nomad and Docker up on your own hosts over SSH (docs/remote.md)",
		Long: `remote installs the pinned Consul and Nomad on the hosts an inventory names,
with hashi-up over SSH: TLS on RPC and HTTP, gossip encryption and ACLs,
the secrets kept on this machine only. Every host is checked before any is
changed; a second run changes nothing and says so.`,
	}
	root.PersistentFlags().StringVarP(&inventory, "inventory", "i", "", "the inventory `file` (cluster/inventory.example.hcl)")
	load := func() (*remote.Inventory, error) {
		if inventory == "" {
			return nil, fmt.Errorf("--inventory FILE is needed (cluster/inventory.example.hcl shows one)")
		}
		return remote.LoadInventory(inventory)
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Check every host of the inventory (SSH, key, sudo, systemd) without changing any",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inv, err := load()
			if err != nil {
				return err
			}
			facts, err := remote.Check(cmd.Context(), inv)
			if err != nil {
				return err
			}
			for _, h := range inv.Hosts {
				f := facts[h.Name]
				fmt.Printf("%-16s %-7s %-15s %s, %s, %d cores, %d MiB, docker %v\n", h.Name, h.Role, h.Address, f.OS, f.Arch, f.CPUs, f.MemoryMiB, f.Docker)
			}
			return nil
		},
	}
	up := &cobra.Command{
		Use:   "up",
		Short: "Install or check the cluster the inventory describes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inv, err := load()
			if err != nil {
				return err
			}
			sum, err := remote.Up(cmd.Context(), inv, remote.Options{Bin: bin, ConsulVersion: consulVersion, NomadVersion: nomadVersion, Root: ".", Orchbench: orchbenchBin, Out: os.Stdout})
			if err != nil {
				return err
			}
			if len(sum.Changed) == 0 {
				fmt.Println("[remote] no change: every host was as the inventory says")
			} else {
				fmt.Printf("[remote] %d changes\n", len(sum.Changed))
			}
			fmt.Printf("[remote] the harness's exports: eval \"$(orchbench remote env -i %s)\" (%s)\n", inventory, sum.EnvFile)
			return nil
		},
	}
	env := &cobra.Command{
		Use:   "env",
		Short: "Print the exports that point orchbench at the remote cluster (scoped tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inv, err := load()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(filepath.Join(inv.StateDir, "env"))
			if err != nil {
				return fmt.Errorf("no exports for %s yet (orchbench remote up first): %w", inventory, err)
			}
			_, err = os.Stdout.Write(b)
			return err
		},
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Remove from every host what remote up installed, and its secrets here",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			inv, err := load()
			if err != nil {
				return err
			}
			return remote.Down(cmd.Context(), inv, os.Stdout)
		},
	}
	images := &cobra.Command{
		Use:     "images IMAGE...",
		Short:   "Push images from this machine's dockerd to the registry on the client host, where every host pulls them",
		Example: "  orchbench remote images -i hosts.hcl orchbench/taewa:local orchbench/orchbench:local",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			inv, err := load()
			if err != nil {
				return err
			}
			return remote.PushImages(cmd.Context(), inv, args, os.Stdout)
		},
	}
	up.Flags().StringVar(&orchbenchBin, "orchbench", ".tools/bin/orchbench", "the orchbench `binary` the node probes run on the hosts")
	root.PersistentFlags().StringVar(&bin, "bin", ".tools/bin", "the `dir` of the pinned consul, nomad and hashi-up")
	root.PersistentFlags().StringVar(&consulVersion, "consul-version", os.Getenv("CONSUL_VERSION"), "the pinned Consul version (cluster/versions.env)")
	root.PersistentFlags().StringVar(&nomadVersion, "nomad-version", os.Getenv("NOMAD_VERSION"), "the pinned Nomad version (cluster/versions.env)")
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		cobra.OnFinalize(stop)
		cmd.SetContext(ctx)
	}
	root.AddCommand(check, up, env, images, down)
	rootCmd.AddCommand(root)
}
