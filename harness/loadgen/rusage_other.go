//go:build !unix

package loadgen

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
