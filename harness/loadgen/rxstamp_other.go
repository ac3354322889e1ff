//go:build !linux

package loadgen

import (
	"net"
	"time"
)

// Without kernel receive stamps, a connection is free when its answer is
// read.
type stampedConn struct {
	net.Conn
	last int64
}

func newStampedConn(nc net.Conn) (*stampedConn, bool) { return nil, false }

func arrivedSince(stamp int64, start time.Time, now int64) int64 { return now }
