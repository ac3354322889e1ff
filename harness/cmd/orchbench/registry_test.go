package main

import (
	"slices"
	"testing"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// Specs are parsed against the adapters this binary links; the experiment
// package's tests assume these three, so a dropped import shows here.
func TestTheBinaryRegistersEveryAdapter(t *testing.T) {
	want := []string{"kubernetes", "nomad", "swarm"}
	if got := orchestrator.Names(); !slices.Equal(got, want) {
		t.Errorf("registered orchestrators %v, want %v", got, want)
	}
}
