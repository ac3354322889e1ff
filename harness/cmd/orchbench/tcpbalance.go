package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/tcpbalance"
)

func init() {
	var listen string
	var backends []string
	var backendsFile string
	cmd := &cobra.Command{
		Use:   "tcp-balance",
		Short: "Relay TCP connections to one of several backends, skipping those that do not answer",
		Long: `tcp-balance is the load balancer in front of the emulated cluster's three
Kubernetes API servers (cluster/nodes-k8s.sh): each connection goes to the
next backend in turn, one whose dial fails is skipped for a few seconds.
It relays bytes only; TLS stays end to end. It is also the entry of
packs/frontier, the balancer in front of the web tier's instances, and of an\nautoscaled service, whose instances it learns from --backends-file.`,
		Example: `  orchbench tcp-balance --listen 10.77.0.10:6443 --backend 10.77.0.11:6443 --backend 10.77.0.12:6443 --backend 10.77.0.13:6443`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := tcpbalance.New(backends)
			if err != nil {
				return err
			}
			b.Log = log.Printf
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("tcp-balance: --listen %s: %w", listen, err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log.Printf("tcp-balance: %s to %v", l.Addr(), backends)
			if backendsFile != "" {
				go b.WatchFile(ctx, backendsFile, time.Second)
			}
			return b.Serve(ctx, l)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:6443", "`host:port` to accept connections on")
	// A list too: a Nomad template renders every instance into one variable.
	cmd.Flags().StringSliceVar(&backends, "backend", nil, "`host:port` of a backend (repeatable, or comma-separated)")
	// A file the orchestrator rewrites as instances come and go (an
	// autoscaled service): read every second; --backend serves until it exists.
	cmd.Flags().StringVar(&backendsFile, "backends-file", "", "`path` of a file of host:port backends that replaces --backend's whenever it changes")
	rootCmd.AddCommand(cmd)
}
