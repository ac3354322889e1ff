package loadgen

import (
	"bufio"
	"context"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// An answer that waits in the socket buffer while the generator is busy
// must be dated by its arrival, not by the late read: that is what lets the
// generator's lag show a starved generator.
func TestReceiveStampsDateTheArrivalNotTheRead(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	wrote := make(chan time.Time, 1)
	stamping := make(chan struct{})
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		<-stamping // as in the engines, the request goes out after stamps are on
		time.Sleep(50 * time.Millisecond)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		wrote <- time.Now()
		time.Sleep(time.Second)
	}()

	t.Run("recvmsg", func(t *testing.T) {
		nc, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		sc, ok := newStampedConn(nc)
		if !ok {
			t.Fatal("a TCP connection gives no syscall access")
		}
		// the kernel turns receive stamping on for the whole stack with
		// deferred work, so the first packets after the first socket asks
		// may go unstamped; the engines enable it at connect, well before
		close(stamping)
		at := <-wrote
		time.Sleep(150 * time.Millisecond) // the generator is busy elsewhere
		buf := make([]byte, 256)
		n, err := sc.Read(buf)
		read := time.Now()
		if err != nil || n == 0 {
			t.Fatalf("read %d: %v", n, err)
		}
		if sc.last == 0 {
			t.Fatal("the kernel gave no receive stamp")
		}
		arrived := time.Unix(0, sc.last)
		if waited := read.Sub(arrived); waited < 140*time.Millisecond {
			t.Fatalf("the answer arrived %s before the read, want about 150ms", waited)
		}
		if off := arrived.Sub(at); off < -5*time.Millisecond || off > 50*time.Millisecond {
			t.Fatalf("arrival stamped %s after the write", off)
		}
		start := read.Add(-time.Second)
		if got := arrivalOn(sc.last, read, start, 0); got > int64(time.Second-140*time.Millisecond) {
			t.Fatalf("arrival on the run's clock %s, want before the read", time.Duration(got))
		}
	})
}

func TestStampOfIgnoresOtherControlMessages(t *testing.T) {
	if stampOf(nil) != 0 || stampOf(make([]byte, syscall.SizeofCmsghdr-1)) != 0 {
		t.Fatal("no control message, no stamp")
	}
	bad := make([]byte, rxOOBSize)
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&bad[0]))
	h.Level, h.Type = syscall.SOL_SOCKET, syscall.SCM_RIGHTS
	h.SetLen(syscall.SizeofCmsghdr + 4)
	if stampOf(bad) != 0 {
		t.Fatal("SCM_RIGHTS read as a stamp")
	}
	h.SetLen(1 << 20)
	if stampOf(bad) != 0 {
		t.Fatal("an overlong header must not be followed")
	}
}

func TestArrivalOnFallsBackToTheRead(t *testing.T) {
	start := time.Now()
	read := start.Add(time.Second)
	readAt := int64(time.Second)
	sent := int64(900 * time.Millisecond)
	if got := arrivalOn(0, read, start, sent); got != readAt {
		t.Fatalf("no stamp: %s, want the read at %s", time.Duration(got), time.Duration(readAt))
	}
	// 30 ms in the socket: the response ended 30 ms before the read
	if got := arrivalOn(read.UnixNano()-int64(30*time.Millisecond), read, start, sent); got != readAt-int64(30*time.Millisecond) {
		t.Fatalf("stamped 30ms before the read: %s", time.Duration(got))
	}
	// a stamp from before the send is an earlier answer's
	if got := arrivalOn(read.UnixNano()-int64(200*time.Millisecond), read, start, sent); got != readAt {
		t.Fatalf("a stamp before the send was used: %s", time.Duration(got))
	}
	// a stamp after the read is no arrival (a wall-clock step)
	if got := arrivalOn(read.UnixNano()+int64(time.Millisecond), read, start, sent); got != readAt {
		t.Fatalf("a stamp after the read was used: %s", time.Duration(got))
	}
}

// serveAfter answers every request on its connections with a fixed
// response after the service time, like a server that is never the
// bottleneck.
func serveAfter(t *testing.T, service time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					time.Sleep(service)
					if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// heldBack is a generator that gets to its socket late: each read waits
// first, as a starved generator's would, while the answer sits in the
// socket buffer.
type heldBack struct {
	src  io.Reader
	hold time.Duration
}

func (h heldBack) Read(p []byte) (int, error) {
	time.Sleep(h.hold)
	return h.src.Read(p)
}

// Latency ends at the kernel's receive stamp, so the generator's own delay
// in reading an answer that already arrived is not counted as the
// service's time: the goroutine engine, whose reader is held back.
func TestGoroutineEngineLatencyEndsAtTheArrival(t *testing.T) {
	const service, hold = 20 * time.Millisecond, 300 * time.Millisecond
	addr := serveAfter(t, service)
	cfg := &Config{Timeout: 5 * time.Second, MaxEndpoints: 4}
	r := &run{cfg: cfg, ctx: context.Background(), conns: 1}
	r.startClock()
	r.hardEnd = r.start.Add(time.Minute)
	th := &thread{meas: newRecorder(4), warm: newRecorder(4)}
	th.iv.hist = newLatencyHist()
	c := &conn{r: r, t: th, addr: addr}
	if err := c.dial(); err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if c.stamp == nil {
		t.Skip("no receive stamps on this connection")
	}
	c.br = bufio.NewReader(heldBack{src: c.stamp, hold: hold})
	raw := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	// the kernel may leave the first packets after stamping is first
	// enabled unstamped: count only exchanges that had a stamp
	stamped := 0
	for i := 0; i < 4 && stamped < 2; i++ {
		sent := time.Now()
		c.exchange(sent, sent, raw, "", false)
		read := time.Since(sent)
		if c.s.failed {
			t.Fatalf("exchange %d failed: %v", i, c.s.class)
		}
		if c.stamp.last == 0 {
			continue
		}
		stamped++
		if read < hold {
			t.Fatalf("the read took %s, less than the %s hold-back", read, hold)
		}
		if c.s.uncorrected < service || c.s.uncorrected >= hold-50*time.Millisecond {
			t.Fatalf("latency %s with a %s service and a %s hold-back: want the service's time, not the generator's delay", c.s.uncorrected, service, hold)
		}
		if c.s.corrected < c.s.uncorrected || c.s.corrected > c.s.uncorrected+10*time.Millisecond {
			t.Fatalf("sent on time, yet corrected %s, uncorrected %s", c.s.corrected, c.s.uncorrected)
		}
		// the connection was free from the arrival: the hold-back is lag
		if free := time.Duration(c.freeAt) - sent.Sub(r.start); free > c.s.corrected {
			t.Fatalf("free %s after the send, past the response's end at %s", free, c.s.corrected)
		}
	}
	if stamped == 0 {
		t.Fatal("the kernel stamped none of 4 answers")
	}
}

// The event loop, held up by a response hook that sleeps: the answers of
// the other connection wait in their socket meanwhile. Their latency must
// stay the server's, and the loop's delay show as lag instead.
func TestEventLoopLatencyEndsAtTheArrival(t *testing.T) {
	const service, hold = 80 * time.Millisecond, 300 * time.Millisecond
	addr := serveAfter(t, service)
	script := `require "socket"
response = function() socket.sleep(0.3) end`
	// two connections at 20/s: the second is in flight when the first's
	// answer stops the loop for the hold-back
	res := runLoad(t, Config{URL: "http://" + addr + "/", Threads: 1, Connections: 2, Rate: 20, Duration: 2 * time.Second,
		ScriptSource: script, Engine: EngineLoop})
	if res.UncorrectedLatency.Count < 4 {
		t.Fatalf("only %d responses", res.UncorrectedLatency.Count)
	}
	p50 := time.Duration(percentileOf(res.UncorrectedLatency, 50)) * time.Microsecond
	if p50 < service || p50 >= hold-100*time.Millisecond {
		t.Fatalf("uncorrected p50 %s with a %s service and a %s hold-back: want the service's time", p50, service, hold)
	}
	if lag := time.Duration(res.Generator.LagMaxUs) * time.Microsecond; lag < hold/2 {
		t.Fatalf("the loop's %s hold-back shows as a lag of only %s", hold, lag)
	}
}
