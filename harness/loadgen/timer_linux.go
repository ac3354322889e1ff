package loadgen

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// The Go runtime parks idle threads in epoll_wait with a millisecond
// timeout, so time.Sleep wakes up to 1 ms late when the generator is mostly
// idle (low rates), and that lateness would land in the corrected latency.
// A per-connection timerfd lives in the same netpoller but fires with
// hrtimer precision, so the final stretch of each wait uses it; the coarse
// part of a long wait still uses time.Sleep, which costs no syscalls.

const (
	tfdNonblock = 0x800   // TFD_NONBLOCK == O_NONBLOCK
	tfdCloexec  = 0x80000 // TFD_CLOEXEC == O_CLOEXEC
	clockMono   = 1       // CLOCK_MONOTONIC
	// coarseMargin is left to the timerfd after a time.Sleep: the runtime's
	// lateness is under a millisecond, plus scheduling noise.
	coarseMargin = 2 * time.Millisecond
)

type itimerspec struct {
	interval syscall.Timespec
	value    syscall.Timespec
}

type preciseTimer struct {
	f    *os.File
	fd   uintptr
	spec itimerspec
	buf  [8]byte
}

func newPreciseTimer() *preciseTimer {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMono, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil
	}
	return &preciseTimer{f: os.NewFile(fd, "loadgen-timer"), fd: fd}
}

// sleep waits until at, at most max; false means the timerfd failed and
// the caller should fall back to time.Sleep.
func (t *preciseTimer) sleep(at time.Time, max time.Duration) bool {
	d := time.Until(at)
	if d > max {
		d = max
	}
	if d > coarseMargin {
		time.Sleep(d - coarseMargin)
		if d = time.Until(at); d > coarseMargin {
			return true // a slice of a long wait; the caller loops
		}
	}
	if d <= 0 {
		return true
	}
	t.spec.value = syscall.NsecToTimespec(int64(d))
	if _, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, t.fd, 0, uintptr(unsafe.Pointer(&t.spec)), 0, 0, 0); errno != 0 {
		return false
	}
	_, err := t.f.Read(t.buf[:])
	return err == nil
}

func (t *preciseTimer) close() { t.f.Close() }
