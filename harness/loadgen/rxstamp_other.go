//go:build !linux

package loadgen

import (
	"net"
	"time"
)

// Without kernel receive stamps, a response ends, and its connection is
// free, when the engine has read it.
type stampedConn struct {
	net.Conn
	last int64
}

func newStampedConn(nc net.Conn) (*stampedConn, bool) { return nil, false }

func arrivalOn(stamp int64, read, start time.Time, sent int64) int64 { return int64(read.Sub(start)) }
