package orchestrator

import "testing"

func TestToolImageKeepsTheRegistryAndTag(t *testing.T) {
	cases := map[string]string{
		"orchbench/orchbench:local":                  "orchbench/fortio:local",
		"orchbench/orchbench:abc123":                 "orchbench/fortio:abc123",
		"10.77.0.10:5000/orchbench/orchbench:local":  "10.77.0.10:5000/orchbench/fortio:local",
		"10.77.0.10:5000/orchbench/orchbench":        "10.77.0.10:5000/orchbench/fortio:local",
		"registry.example.org/orchbench/orchbench:v": "registry.example.org/orchbench/fortio:v",
	}
	for load, want := range cases {
		if got := ToolImage(load, "fortio"); got != want {
			t.Errorf("ToolImage(%q) = %q, want %q", load, got, want)
		}
	}
}
