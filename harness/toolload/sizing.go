package toolload

import "github.com/orchbench/orchbench/harness/loadgen"

// RunCeiling is a tool whose CPU ceiling depends on its run (Artillery
// starts a worker thread per core of its node but one): MaxCoresOf reads it
// from the result, 0 when unknown.
type RunCeiling interface {
	MaxCoresOf(res *loadgen.Result) float64
}

// Ceiling is the most CPU t could use in the run res measured: its fixed
// MaxCores, else what its run says.
func Ceiling(t Tool, res *loadgen.Result) float64 {
	if c := t.MaxCores(); c > 0 {
		return c
	}
	if rc, ok := t.(RunCeiling); ok {
		return rc.MaxCoresOf(res)
	}
	return 0
}

// MemorySizer is a tool that needs more memory than orchbench's generator
// is given (a Node or Java runtime with its modules loaded).
type MemorySizer interface {
	MemoryMiB() int
}

// MemoryMiB is the memory t's job gets: its own need, else fallback.
func MemoryMiB(t Tool, fallback int) int {
	if m, ok := t.(MemorySizer); ok && m.MemoryMiB() > fallback {
		return m.MemoryMiB()
	}
	return fallback
}
