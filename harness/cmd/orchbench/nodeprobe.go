package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/nodeprobe"
)

func init() {
	var listen, name, tokenFile string
	var roots nodeprobe.HostRoots
	cmd := &cobra.Command{
		Use:   "node-probe",
		Short: "Serve this node's cgroups, process table and sockets to the harness over HTTP, and signal its containers' processes",
		Long: `node-probe answers the harness's questions about the tasks on this node:
the CPU and memory limits their cgroups enforce, the CPU they used and how
often they were throttled, their resident memory, the cgroups of every
process, the executable of every process, and which process accepts a
connection to an address (which it opens from this node, or from inside a
network namespace file it is given). The gates read a task's host through it
when the harness runs elsewhere (docs/node-probe.md).

It can also send SIGKILL or SIGTERM to the process of a container named by
its full ID (the kill-task fault), never to a PID it is handed. Anyone who
reaches --listen can read the node's process table, have it open TCP
connections from this node and kill its containers: listen on an address
only the harness reaches (the default is loopback), on a cluster the node's
address on a network only the cluster and the harness share, and give
--token-file (the harness reads the same file from
ORCHBENCH_PROBE_TOKEN_FILE) where others share that network.`,
		Example: `  orchbench node-probe                                   # 127.0.0.1:7070, named after the hostname
  orchbench node-probe --listen 10.77.0.11:7070 --name n1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				name = os.Getenv(nodeNameEnv)
			}
			if name == "" {
				h, err := os.Hostname()
				if err != nil {
					return fmt.Errorf("node-probe: no --name and no hostname: %w", err)
				}
				name = h
			}
			token, err := nodeprobe.ReadToken(tokenFile)
			if err != nil {
				return fmt.Errorf("node-probe: --token-file: %w", err)
			}
			roots.Apply()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return serveNodeProbe(ctx, listen, name, token, func(addr net.Addr) {
				auth := "no token"
				if token != "" {
					auth = "token required"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "node probe of %s on http://%s/v1/ (%s)\n", name, addr, auth)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", net.JoinHostPort("127.0.0.1", strconv.Itoa(nodeprobe.DefaultPort)), "`address` to serve on")
	cmd.Flags().StringVar(&name, "name", "", "the node's `name` as the orchestrators call it, in every error (default: $"+nodeNameEnv+", then the hostname)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "`file` holding a token every request must carry (default: none)")
	cmd.Flags().StringVar(&roots.Proc, "proc", "", "the node's /proc as this process sees it (`dir`; default /proc): a probe in a container without the host's PID namespace mounts it")
	cmd.Flags().StringVar(&roots.Cgroup, "cgroup-root", "", "the node's cgroup tree (`dir`; default /sys/fs/cgroup)")
	cmd.Flags().StringVar(&roots.Docker, "docker-root", "", "the node's Docker data directory, read for containers' image IDs (`dir`; default /var/lib/docker)")
	cmd.Flags().StringVar(&roots.System, "system-root", "", "where the node's /etc and /usr/lib/os-release are mounted under (`dir`), read for its OS; default: its init's root, else this process's")
	cmd.AddCommand(nodeProbeListCmd())
	rootCmd.AddCommand(cmd)
}

// nodeNameEnv names the node where a flag cannot: a Swarm service's
// arguments are not templates, its environment is ({{.Node.Hostname}}).
const nodeNameEnv = "ORCHBENCH_NODE_NAME"

// serveNodeProbe serves this machine as node name until ctx ends; ready is
// told the address once it listens.
func serveNodeProbe(ctx context.Context, listen, name, token string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("node-probe: %w", err)
	}
	probe := nodeprobe.NewServer(nodeprobe.Local{NodeName: name})
	probe.Token = token
	srv := &http.Server{
		Handler: probe,
		// the slowest answer waits for a connection to be accepted
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      nodeprobe.MaxAcceptorWait + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	ready(ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("node-probe: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("node-probe: shutting down: %w", err)
	}
	return nil
}
