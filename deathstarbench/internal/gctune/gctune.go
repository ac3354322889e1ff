// Package gctune sets the Go collector of the social network's processes
// (FerretDB and the socialnet services) for a small live heap that
// allocates heavily per request, under a container's memory limit.
package gctune

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// These processes allocate heavily per request (FerretDB converts every
// document from SQLite's JSON to its own types and to BSON; the services
// decode and encode Thrift, JSON and BSON) while their live heaps are a few
// MiB, so at Go's default GOGC of 100 the collector ran often: about a fifth
// of FerretDB's CPU per user-timeline read. At 400 a read cost it 0.42 ms of
// CPU instead of 0.57 ms. The heap may then grow to five times the live
// data, so a soft memory limit below the container's keeps the task from
// being OOM-killed: near the limit the collector runs as often as it must.
const (
	DefaultGCPercent = 400
	// memoryLimitShare is the part of the cgroup's memory limit given to
	// the Go heap; the rest is SQLite's page cache (allocated through Go
	// too, but kept as live data) and the runtime's own overhead.
	memoryLimitShare = 0.75
)

// CgroupLimitFiles are where a container finds its memory limit: cgroup v2's
// memory.max, then cgroup v1's memory.limit_in_bytes.
var CgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Apply sets DefaultGCPercent unless GOGC is set, and a soft memory limit
// of memoryLimitShare of the first limit found in limitFiles unless
// GOMEMLIMIT is set. It returns the limit it set, 0 for none.
func Apply(limitFiles []string) int64 {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	for _, path := range limitFiles {
		if limit, ok := readCgroupLimit(path); ok {
			soft := int64(float64(limit) * memoryLimitShare)
			debug.SetMemoryLimit(soft)
			return soft
		}
	}
	return 0
}

// noLimitV1 is what cgroup v1 reports for no limit: the largest multiple of
// the page size below 2^63.
const noLimitV1 = 1<<63 - 1<<12

// readCgroupLimit reads memory.max ("max" for none) or memory.limit_in_bytes.
func readCgroupLimit(path string) (int64, bool) {
	text, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	limit, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
	if err != nil || limit <= 0 || limit >= noLimitV1 {
		return 0, false
	}
	return limit, true
}
