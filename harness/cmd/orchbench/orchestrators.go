package main

// The orchestrators this binary can drive: each adapter registers itself
// under its name when its package is linked in. Adding an orchestrator is
// one package under harness/orchestrator/ and one line here.
import (
	_ "github.com/orchbench/orchbench/harness/orchestrator/kubernetes"
	_ "github.com/orchbench/orchbench/harness/orchestrator/nomad"
	_ "github.com/orchbench/orchbench/harness/orchestrator/swarm"
)
