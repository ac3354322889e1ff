// Package envdefault gives the DeathStarBench ports' command-line flags
// their defaults from the environment, which is how an orchestrator's job
// fills them.
package envdefault

import (
	"os"
	"strconv"
	"time"
)

// String is the variable's value, or fallback when it is unset or empty.
func String(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// Int is the variable as an integer, or fallback when it is not one.
func Int(name string, fallback int64) int64 {
	if value, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return value
	}
	return fallback
}

// Duration is the variable as a Go duration, or fallback when it is not one.
func Duration(name string, fallback time.Duration) time.Duration {
	if value, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return value
	}
	return fallback
}
