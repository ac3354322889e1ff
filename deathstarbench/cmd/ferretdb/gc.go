package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// FerretDB allocates heavily per request (it converts every document from
// SQLite's JSON to its own types and to BSON), and its live heap is small,
// so at Go's default GOGC of 100 the collector ran often: about a fifth of
// its CPU per user-timeline read. At 400 a read cost 0.42 ms of CPU instead
// of 0.57 ms. The heap may then grow to five times the live data, so a soft
// memory limit below the container's keeps the task from being OOM-killed:
// near the limit the collector runs as often as it must.
const (
	defaultGCPercent = 400
	// memoryLimitShare is the part of the cgroup's memory limit given to
	// the Go heap; the rest is SQLite's page cache (allocated through Go
	// too, but kept as live data) and the runtime's own overhead.
	memoryLimitShare = 0.75
	cgroupMemoryMax  = "/sys/fs/cgroup/memory.max"
)

// tuneGC applies defaultGCPercent unless GOGC is set, and a soft memory
// limit of memoryLimitShare of the cgroup's unless GOMEMLIMIT is set. It
// returns the limit it set, 0 for none.
func tuneGC(cgroupLimitFile string) int64 {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit, ok := readCgroupLimit(cgroupLimitFile)
	if !ok {
		return 0
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return soft
}

// readCgroupLimit reads a cgroup v2 memory.max: bytes, or "max" for none.
func readCgroupLimit(path string) (int64, bool) {
	text, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	limit, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	if err != nil || limit <= 0 {
		return 0, false
	}
	return limit, true
}
