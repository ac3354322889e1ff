package loadgen

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// When the event loop wakes up. An epoll wait that returns as soon as any
// socket is readable wakes the loop once per response, and each wake-up is
// a context switch (a quarter of the loop's CPU profile at 40k req/s was
// finish_task_switch under epoll_pwait2). But a response's latency ends at
// its kernel receive stamp and its connection counts as free from then
// (arrivalOn), so reading it late changes no figure as long as it is read
// before that connection's next request is due. So while every request in
// flight can wait, the loop sleeps until the next send (or the earliest
// next send of a busy connection) without being woken by answers, then
// collects every answer that arrived with one non-blocking epoll_wait.
//
// A request must be read as it arrives, and the loop waits on its events,
// when its connection is connecting or writing (the request is not out),
// when its next request is already due (the generator is behind), when it
// went out longer than deferHorizon ago, when
// part of the answer was read already, or when the connection's last
// answer was large: one that does not fit in the socket buffers stalls the
// server until read, and the stall would show as latency.

// deferHorizon bounds how long an answer may stay unread after its
// request went out: the per-second series and a script's response() hook
// see an answer when it is read, so at low rates, where the next send of
// a connection can be seconds away, answers are read as they arrive once
// this has passed. Above a few hundred requests a second the loop wakes
// for sends more often than this anyway.
const deferHorizon = 5 * time.Millisecond

// lazyMaxResponse is the largest answer a connection may leave unread:
// well under the smallest loopback TCP receive buffer (tcp_rmem's default
// 128 KiB), so the server's write never waits for the generator.
const lazyMaxResponse = 32 << 10

// wakePlan is what the loop waits for next.
type wakePlan struct {
	deadline   int64 // ns since start; wake by then in any case
	inflight   int   // requests connecting, writing or awaiting an answer
	oldestSent int64 // the earliest send among them: the first to time out
	deferred   int   // of those, answers that may wait for the deadline
	needEvents bool  // some in-flight request must be handled as it arrives
}

// planWake decides the next wake-up at now. nextSend is the earliest queued
// send (queued false when none is) and limit the latest wake-up otherwise
// (the idle slice); the caller bounds the deadline by the first timeout
// too.
func planWake(conns []*loopConn, now, nextSend int64, queued bool, limit int64) wakePlan {
	w := wakePlan{deadline: limit, oldestSent: noNextDue}
	if queued {
		w.deadline = min(w.deadline, nextSend)
	}
	for _, c := range conns {
		switch c.st {
		case lcConnecting, lcWriting:
			w.inflight++
			w.oldestSent = min(w.oldestSent, c.sent)
			w.needEvents = true
		case lcReading:
			w.inflight++
			w.oldestSent = min(w.oldestSent, c.sent)
			if c.canDefer(now) {
				w.deferred++
				w.deadline = min(w.deadline, c.nextDue, c.sent+int64(deferHorizon))
			} else {
				w.needEvents = true
			}
		}
	}
	return w
}

// canDefer reports whether the answer to c's request in flight may stay
// unread until c's next request is due or the horizon has passed.
func (c *loopConn) canDefer(now int64) bool {
	return c.lastFit && c.nextDue != noNextDue && c.nextDue > now && now < c.sent+int64(deferHorizon) &&
		c.resp.bytes == 0 && c.rd == c.wr
}

// noNextDue marks a connection with no further hit in the window: nothing
// else wakes the loop for its answer, so it is read as it arrives. It is
// also "never" for the loop's other deadlines.
const noNextDue = int64(1<<63 - 1)

// yieldEvery keeps the loop's goroutine from looking stuck to the runtime:
// one that runs on the same scheduler tick for 10 ms has its P taken at
// every blocking wait, and sysmon then polls every 20 µs (8 % of the CPU
// profile at 30k req/s). A yield this often renews the tick for a few
// microseconds of CPU a second.
const yieldEvery = 5 * time.Millisecond

// yieldNow yields when yieldEvery has passed since the last yield, and
// sets the timer slack again on the thread the loop then runs on.
func (l *loop) yieldNow(now int64) {
	if now-l.yielded < int64(yieldEvery) {
		return
	}
	runtime.Gosched()
	preciseTimers()
	l.yielded = now
}

// prSetTimerslack is prctl's PR_SET_TIMERSLACK.
const prSetTimerslack = 29

// preciseTimers takes the current thread's timer slack down from the
// default 50 µs to 1 ns: the loop's waits end when the next request is
// due, and Linux would otherwise let them end up to 50 µs later, which the
// corrected latency would count. The loop's goroutine is not locked to its
// thread (a locked goroutine's every yield is a hand-off between threads),
// so it calls this again after each yield, the point where it may have
// moved; a thread it left keeps the setting, which only makes its own
// sleeps end on time.
func preciseTimers() {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
}

// sleep blocks for ns nanoseconds without watching the sockets; a signal
// (the runtime's preemption) ends it early, and the loop then plans again.
func (l *loop) sleep(ns int64) {
	l.ts = syscall.NsecToTimespec(ns)
	syscall.Syscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&l.ts)), 0, 0)
}

// poll collects the events already pending, without blocking.
func (l *loop) poll() int {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&l.events[0])),
		loopEvents, 0, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(n)
}

// waitFor carries out a plan: a wait on events when some request needs
// them or none is deferred (one syscall), else a sleep and a poll.
func (l *loop) waitFor(w wakePlan, now int64) int {
	wait := w.deadline - now
	if w.needEvents || w.deferred == 0 {
		return l.wait(max(wait, 0))
	}
	if wait > 0 {
		l.sleep(wait)
	}
	return l.poll()
}
