//go:build !linux

package loadgen

func eventLoopAvailable() bool { return false }

func (r *run) runLoops([]*conn, func()) error { panic("loadgen: no event loop on this platform") }
