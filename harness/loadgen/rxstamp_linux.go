package loadgen

import (
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"
)

// When a response's bytes reached the socket, as the kernel stamped them
// (SO_TIMESTAMPNS on the TCP socket, returned by recvmsg). The generator
// reads a response only when it gets CPU: a generator starved by its CPU
// cap or by neighbours leaves answers waiting in the socket buffer, and
// measured from its own read, that wait would pass for server latency and
// hide from the send lag. With the arrival time, latency ends when the
// answer arrived and a connection counts as free from then, so a late read
// shows as the generator's lag, which the harness's generator gate judges.

// rxOOBSize holds one SCM_TIMESTAMPNS control message.
const rxOOBSize = 64

// enableRxStamps asks the kernel to stamp received data on fd.
func enableRxStamps(fd int) {
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
}

// rxStamper is one connection's recvmsg state, allocated once.
type rxStamper struct {
	oob [rxOOBSize]byte
	iov syscall.Iovec
	msg syscall.Msghdr
}

// recv reads into p like read(2), and returns the wall-clock arrival of the
// data in Unix nanoseconds (0 when the kernel gave none).
func (s *rxStamper) recv(fd int, p []byte) (n int, arrival int64, err error) {
	s.iov.Base = &p[0]
	s.iov.SetLen(len(p))
	s.msg.Iov = &s.iov
	s.msg.Iovlen = 1
	s.msg.Control = &s.oob[0]
	s.msg.SetControllen(rxOOBSize)
	r, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&s.msg)), 0)
	if errno != 0 {
		return 0, 0, errno
	}
	return int(r), stampOf(s.oob[:s.msg.Controllen]), nil
}

// stampOf finds SCM_TIMESTAMPNS in a control buffer without allocating.
func stampOf(oob []byte) int64 {
	for len(oob) >= syscall.SizeofCmsghdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < syscall.SizeofCmsghdr || int(h.Len) > len(oob) {
			return 0
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && int(h.Len) >= syscall.SizeofCmsghdr+int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[syscall.SizeofCmsghdr]))
			return ts.Nano()
		}
		oob = oob[cmsgAlign(int(h.Len)):]
	}
	return 0
}

func cmsgAlign(n int) int {
	const a = int(unsafe.Sizeof(uintptr(0)))
	return (n + a - 1) &^ (a - 1)
}

// stampedConn is the goroutine engine's reader: recvmsg through the
// runtime's poller (so deadlines still apply), remembering the arrival of
// the last bytes read (0 when that read had no stamp).
type stampedConn struct {
	rc   syscall.RawConn
	rx   rxStamper
	last int64 // Unix ns of the last data read; 0 if unknown
}

func newStampedConn(nc net.Conn) (*stampedConn, bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	rc.Control(func(fd uintptr) { enableRxStamps(int(fd)) })
	return &stampedConn{rc: rc}, true
}

func (s *stampedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := s.rc.Read(func(fd uintptr) bool {
		var at int64
		n, at, rerr = s.rx.recv(int(fd), p)
		if rerr == syscall.EAGAIN {
			return false // wait for readability, deadline included
		}
		if n > 0 {
			// the read that completes a response decides its stamp, so
			// one without a stamp must not leave an earlier read's
			s.last = at
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// arrivalOn is when a response was complete, on the run's clock (ns since
// start): the kernel's stamp of the segment that completed it, or read,
// the moment the engine had parsed it, when no stamp came. This is where
// latency ends. wrk2 stops its clock when its parser completes the
// response; the kernel-side equivalent is the arrival of the segment that
// carried the last bytes (recvmsg reports the stamp of the last segment it
// copied, and the engines keep the stamp of the read that completed the
// response). The first byte's stamp would leave out the transfer of a
// large body, which is part of the response time. Ending at the read would
// add the generator's own delay in getting to the bytes, which the kernel
// already had.
//
// The time the bytes waited in the socket is taken on the wall clock the
// stamp is on, from read's own wall reading, and subtracted from read's
// monotonic reading: a stamp set against the run's start would drift with
// every slew of the wall clock since. A stamp before sent (ns since start)
// belongs to no answer to this request, and one after read to no real
// arrival: either falls back to read.
func arrivalOn(stamp int64, read, start time.Time, sent int64) int64 {
	readAt := int64(read.Sub(start))
	if stamp == 0 {
		return readAt
	}
	waited := read.UnixNano() - stamp
	if waited < 0 || readAt-waited < sent {
		return readAt
	}
	return readAt - waited
}
