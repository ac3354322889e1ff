package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchbench/orchbench/harness/nodeprobe"
	"github.com/orchbench/orchbench/harness/orchestrator"
)

// finder is an orchestrator's answer to where its probes are.
type finder struct {
	probes map[string]string
	err    error
}

func (f finder) NodeProbes(context.Context) (map[string]*nodeprobe.Client, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]*nodeprobe.Client{}
	for n, a := range f.probes {
		out[n] = nodeprobe.NewClient(n, a)
	}
	return out, nil
}

func urls(clients map[string]*nodeprobe.Client) map[string]string {
	out := map[string]string{}
	for n, c := range clients {
		out[n] = c.BaseURL
	}
	return out
}

func TestProbeClientsAreFoundThroughTheOrchestrators(t *testing.T) {
	ctx := context.Background()
	absent := finder{err: orchestrator.ErrNoNodeProbes}

	var out bytes.Buffer
	clients, found, err := sweepFlags{}.probeClients(ctx, map[string]orchestrator.ProbeFinder{
		"nomad": finder{probes: map[string]string{"w1": "10.0.0.21:7070", "w2": "10.0.0.22:7070"}},
		"swarm": finder{probes: map[string]string{"w1": "10.0.0.21:7071", "w3": "10.0.0.23:7070"}},
	}, &out)
	if err != nil || !found {
		t.Fatalf("found %v, %v", found, err)
	}
	want := map[string]string{"w1": "http://10.0.0.21:7070", "w2": "http://10.0.0.22:7070", "w3": "http://10.0.0.23:7070"}
	if got := urls(clients); len(got) != 3 || got["w1"] != want["w1"] || got["w2"] != want["w2"] || got["w3"] != want["w3"] {
		t.Errorf("probes %v, want %v (a node's first probe kept)", got, want)
	}
	if !strings.Contains(out.String(), "node w1 has probes at http://10.0.0.21:7070 and http://10.0.0.21:7071") {
		t.Errorf("two probes of w1 not noted:\n%s", out.String())
	}

	out.Reset()
	clients, found, err = sweepFlags{}.probeClients(ctx, map[string]orchestrator.ProbeFinder{"nomad": absent, "swarm": absent}, &out)
	if err != nil || found || clients != nil {
		t.Errorf("no probe deployed: %v, %v, %v; want none found", clients, found, err)
	}
	if !strings.Contains(out.String(), "no node probe is deployed (nomad, swarm)") {
		t.Errorf("reading this machine instead was not said:\n%s", out.String())
	}

	_, _, err = sweepFlags{}.probeClients(ctx, map[string]orchestrator.ProbeFinder{"nomad": finder{err: errors.New("connection refused")}}, &out)
	if err == nil || !strings.Contains(err.Error(), "finding the node probes on nomad: connection refused") {
		t.Errorf("an orchestrator that cannot be asked: %v", err)
	}
}

func TestProbeFlagsOverrideAndTheTokenIsShared(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(nodeprobe.TokenFileEnv, tok)
	never := map[string]orchestrator.ProbeFinder{"nomad": finder{err: errors.New("must not be asked")}}
	clients, found, err := sweepFlags{nodeProbes: []string{"w1=10.0.0.21:7070"}}.probeClients(context.Background(), never, &bytes.Buffer{})
	if err != nil || !found || len(clients) != 1 || clients["w1"].BaseURL != "http://10.0.0.21:7070" || clients["w1"].Token != "s3cret" {
		t.Fatalf("--node-probe w1=…: %v, %v, %v", clients, found, err)
	}
	if _, _, err := (sweepFlags{nodeProbes: []string{"w1"}}).probeClients(context.Background(), never, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--node-probe") {
		t.Errorf("a malformed flag: %v", err)
	}
	t.Setenv(nodeprobe.TokenFileEnv, tok+".missing")
	if _, _, err := (sweepFlags{}).probeClients(context.Background(), never, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), nodeprobe.TokenFileEnv) {
		t.Errorf("an unreadable token file: %v", err)
	}
}
