//go:build !linux

package loadgen

import "time"

// Elsewhere sleeps keep the runtime's resolution.
type preciseTimer struct{}

func newPreciseTimer() *preciseTimer                      { return nil }
func (*preciseTimer) sleep(time.Time, time.Duration) bool { return false }
func (*preciseTimer) close()                              {}
