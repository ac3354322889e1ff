package rpc

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// countingServer serves the unique-id service on a real 127.0.0.1 socket,
// counting the connections it accepts and the calls it is running, so tests
// see the pool from the upstream's side.
type countingServer struct {
	ln net.Listener

	accepted    atomic.Int64
	calls       atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	// entered receives one value per call reaching the handler.
	entered chan struct{}
	// gate, when not nil, holds every call until it is closed.
	gate chan struct{}
	// breakConns is how many of the next accepted connections read the
	// start of a request and close without answering.
	breakConns atomic.Int64

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCountingServer(t *testing.T) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startCountingServer(t, ln)
}

// startCountingServer serves on ln until the test ends.
func startCountingServer(t *testing.T, ln net.Listener) *countingServer {
	s := &countingServer{ln: ln, entered: make(chan struct{}, 1024)}
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.stop)
	return s
}

func (s *countingServer) addr() string { return s.ln.Addr().String() }

func (s *countingServer) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		s.conns = append(s.conns, nc)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(nc)
	}
}

func (s *countingServer) serve(nc net.Conn) {
	defer s.wg.Done()
	defer nc.Close()
	if s.breakConns.Add(-1) >= 0 {
		// The frame's length prefix arrives, the answer never does.
		io.ReadFull(nc, make([]byte, 4))
		return
	}
	conf := &thrift.TConfiguration{}
	transport := thrift.NewTFramedTransportConf(thrift.NewTSocketFromConnConf(nc, conf), conf)
	protocol := thrift.NewTBinaryProtocolConf(transport, conf)
	processor := sn.NewUniqueIdServiceProcessor(s)
	for {
		if ok, err := processor.Process(context.Background(), protocol, protocol); !ok || err != nil {
			return
		}
	}
}

// ComposeUniqueId answers twice the request ID, so a caller can tell its
// answer from another's.
func (s *countingServer) ComposeUniqueId(_ context.Context, reqID int64, _ sn.PostType) (int64, error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		prev := s.maxInFlight.Load()
		if n <= prev || s.maxInFlight.CompareAndSwap(prev, n) {
			break
		}
	}
	s.entered <- struct{}{}
	if s.gate != nil {
		<-s.gate
	}
	return 2 * reqID, nil
}

// closeConns closes every connection accepted so far, as a restarting
// upstream does.
func (s *countingServer) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, nc := range s.conns {
		nc.Close()
	}
	s.conns = nil
}

func (s *countingServer) stop() {
	s.ln.Close()
	s.closeConns()
	if s.gate != nil {
		select {
		case <-s.gate:
		default:
			close(s.gate)
		}
	}
	s.wg.Wait()
}

// waitEntered waits until n more calls reached the handler.
func (s *countingServer) waitEntered(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for range n {
		select {
		case <-s.entered:
		case <-deadline:
			t.Fatalf("calls did not reach the server (%d in flight)", s.inFlight.Load())
		}
	}
}

// fullBacklogListener listens on 127.0.0.1 with an accept queue of one
// connection and fills it, so the kernel drops the next SYNs until the
// queue is drained: a connect then waits for SYN retransmissions (after 1 s,
// then 3 s), as it does to an upstream too busy to accept.
func fullBacklogListener(t *testing.T) net.Listener {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	file := os.NewFile(uintptr(fd), "backlog-0")
	ln, err := net.FileListener(file)
	file.Close()
	if err != nil {
		t.Fatal(err)
	}
	filler, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { filler.Close() })
	return ln
}

func callOnce(ctx context.Context, client *Client, reqID int64) error {
	id, err := sn.NewUniqueIdServiceClient(client).ComposeUniqueId(ctx, reqID, sn.PostType_POST)
	if err == nil && id != 2*reqID {
		return errors.New("answer meant for another call")
	}
	return err
}
