package loadgen

import (
	"os"
	"syscall"
	"unsafe"
)

// The event loop's plumbing: non-blocking sockets, epoll waits with
// nanosecond timeouts, raw reads and writes, and the heap of connections
// waiting for their next send.

// connect starts a non-blocking connect; c.st tells whether it finished.
func (l *loop) connect(c *loopConn) error {
	fd, err := syscall.Socket(c.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	// Go's dialer sets TCP_NODELAY too; small requests must not wait for
	// Nagle.
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	enableRxStamps(fd)
	c.fd = fd
	c.arrived = 0
	c.gen++
	c.rd, c.wr = 0, 0
	err = syscall.Connect(fd, c.sa)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: c.li, Pad: c.gen}
	switch err {
	case nil:
		c.st = lcIdle
		l.notePeer(c)
	case syscall.EINPROGRESS:
		c.st = lcConnecting
		ev.Events = syscall.EPOLLOUT
	default:
		l.closeFd(c)
		return os.NewSyscallError("connect", err)
	}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.closeFd(c)
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// connected finishes a non-blocking connect once the socket is writable.
func (l *loop) connected(c *loopConn) error {
	soErr, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	if err == nil && soErr != 0 {
		err = syscall.Errno(soErr)
	}
	if err != nil {
		return os.NewSyscallError("connect", err)
	}
	l.notePeer(c)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: c.li, Pad: c.gen}
	return os.NewSyscallError("epoll_ctl", syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_MOD, c.fd, &ev))
}

// notePeer counts the address the connect really reached (getpeername).
func (l *loop) notePeer(c *loopConn) {
	if sa, err := syscall.Getpeername(c.fd); err == nil {
		c.peers.add(sockaddrPort(sa))
	}
}

// abortFd closes with a reset instead of a FIN: the connection of a
// connection-per-request run, whose response is whole. A close leaves the
// socket in TIME_WAIT for a minute, and at a few hundred connections a
// second that exhausts the 28k ephemeral ports of a netns in under a minute
// (then connects fail) or, where TIME_WAIT ports are reused (loopback),
// sends a new SYN into the NAT entry of the old connection (a NodePort then
// refused every few connections). A reset frees the port and the entry.
func (l *loop) abortFd(c *loopConn) {
	if c.fd >= 0 {
		_ = syscall.SetsockoptLinger(c.fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 0})
	}
	l.closeFd(c)
}

func (l *loop) closeFd(c *loopConn) {
	if c.fd >= 0 {
		syscall.Close(c.fd) // also leaves the epoll set
		c.fd = -1
	}
}

func (l *loop) conn(ev *syscall.EpollEvent) (*loopConn, bool) {
	i := int(ev.Fd)
	if i < 0 || i >= len(l.conns) {
		return nil, false
	}
	c := l.conns[i]
	return c, c.gen == ev.Pad && c.fd >= 0
}

// wait blocks in epoll for at most ns nanoseconds (0: just poll).
func (l *loop) wait(ns int64) int {
	if ns <= 0 {
		n, err := syscall.EpollWait(l.epfd, l.events[:], 0)
		if err != nil {
			return 0
		}
		return n
	}
	if !l.noPw2 {
		l.ts = syscall.NsecToTimespec(ns)
		n, _, errno := syscall.Syscall6(sysEpollPwait2, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])),
			loopEvents, uintptr(unsafe.Pointer(&l.ts)), 0, 0)
		switch errno {
		case 0:
			return int(n)
		case syscall.ENOSYS:
			l.noPw2 = true // before Linux 5.11: millisecond timeouts below
		default:
			return 0
		}
	}
	n, _, errno := syscall.Syscall6(syscall.SYS_EPOLL_WAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])),
		loopEvents, uintptr((ns+999_999)/1_000_000), 0, 0)
	if errno != 0 {
		return 0
	}
	return int(n)
}

func (l *loop) push(c *loopConn) {
	l.heap = append(l.heap, c)
	for i := len(l.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if l.heap[p].key <= l.heap[i].key {
			break
		}
		l.heap[p], l.heap[i] = l.heap[i], l.heap[p]
		i = p
	}
}

func (l *loop) pop() *loopConn {
	h := l.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		m, a, b := i, 2*i+1, 2*i+2
		if a < len(h) && h[a].key < h[m].key {
			m = a
		}
		if b < len(h) && h[b].key < h[m].key {
			m = b
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	l.heap = h
	return top
}

// rawWrite skips the runtime's syscall bookkeeping: on a non-blocking
// socket it never blocks, and it is part of the per-request cost (reads go
// through rxStamper.recv).
func rawWrite(fd int, p []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
