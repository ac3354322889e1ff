package loadgen

import (
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
		if got := arrivedSince(sc.last, start, int64(time.Second)); got > int64(time.Second-140*time.Millisecond) {
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
