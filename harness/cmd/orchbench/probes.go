package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// discoverTimeout bounds asking every orchestrator where its probes are.
const discoverTimeout = 30 * time.Second

// probeClients are the clients of the probes --node-probe names, or, with
// none given, of those the orchestrators' probe deployments run (finders,
// by orchestrator name). found is false when no orchestrator has a probe
// deployment: every node is then read from this machine, and the sweep
// says so.
func (f sweepFlags) probeClients(ctx context.Context, finders map[string]orchestrator.ProbeFinder, out io.Writer) (clients map[string]*nodeprobe.Client, found bool, err error) {
	token, err := nodeprobe.ReadToken(os.Getenv(nodeprobe.TokenFileEnv))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", nodeprobe.TokenFileEnv, err)
	}
	if len(f.nodeProbes) > 0 {
		addrs, err := nodeprobe.ParseProbes(f.nodeProbes)
		if err != nil {
			return nil, false, fmt.Errorf("--node-probe: %w", err)
		}
		clients = map[string]*nodeprobe.Client{}
		for name, addr := range addrs {
			clients[name] = nodeprobe.NewClient(name, addr)
		}
		return withToken(clients, token), true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	clients = map[string]*nodeprobe.Client{}
	var absent []string
	for _, o := range slices.Sorted(maps.Keys(finders)) {
		got, err := finders[o].NodeProbes(ctx)
		if errors.Is(err, orchestrator.ErrNoNodeProbes) {
			absent = append(absent, o)
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("finding the node probes on %s: %w", o, err)
		}
		found = true
		for name, c := range got {
			// Nomad's node name and Docker's hostname of one host are often
			// the same: the same probe, or a second one on that host (each
			// reads the whole node); the first is kept
			if have, dup := clients[name]; dup {
				if have.BaseURL != c.BaseURL {
					fmt.Fprintf(out, "note: node %s has probes at %s and %s (on %s); reading it through the first\n", name, have.BaseURL, c.BaseURL, o)
				}
				continue
			}
			clients[name] = c
		}
	}
	if !found {
		fmt.Fprintf(out, "warning: no node probe is deployed (%s): every task is read from this machine, which is right only on the embedded single-node cluster (deploy it: just cluster-up)\n", strings.Join(absent, ", "))
		return nil, false, nil
	}
	if len(absent) > 0 {
		fmt.Fprintf(out, "note: no node probe deployed on %s; their nodes are read through the others' probes of the same name\n", strings.Join(absent, ", "))
	}
	return withToken(clients, token), true, nil
}

func withToken(clients map[string]*nodeprobe.Client, token string) map[string]*nodeprobe.Client {
	for _, c := range clients {
		c.Token = token
	}
	return clients
}

// checkProbes asks every probe who it is, so that one that does not answer,
// or answers for another node, is reported before the first step; the steps
// that need it are then invalid, naming it.
func checkProbes(ctx context.Context, clients map[string]*nodeprobe.Client, out io.Writer) {
	for _, name := range slices.Sorted(maps.Keys(clients)) {
		c := clients[name]
		if got, err := c.Identity(ctx); err != nil {
			fmt.Fprintf(out, "warning: %v (steps with tasks on node %s will be invalid)\n", err, name)
		} else if got != name {
			fmt.Fprintf(out, "warning: the probe at %s serves node %s, not %s\n", c.BaseURL, got, name)
		}
	}
	fmt.Fprintf(out, "node probes: %s\n", describeProbes(clients))
}

func describeProbes(clients map[string]*nodeprobe.Client) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(clients)) {
		parts = append(parts, name+"="+strings.TrimPrefix(clients[name].BaseURL, "http://"))
	}
	return strings.Join(parts, " ")
}
