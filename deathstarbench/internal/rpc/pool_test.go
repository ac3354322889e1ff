package rpc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func testOptions(connections int) Options {
	return Options{Connections: connections, WaitTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}
}

// callAll runs callers concurrent calls and returns their errors.
func callAll(client *Client, callers int) []error {
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = callOnce(context.Background(), client, int64(i))
		}()
	}
	wg.Wait()
	return errs
}

// waitForWaiters waits until n callers are blocked for a connection.
func waitForWaiters(t *testing.T, client *Client, n int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for client.onlyPool().waiting.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers waiting for a connection, want %d", client.onlyPool().waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPoolOpensAtMostConnectionsUnderMoreCallers(t *testing.T) {
	const connections, callers = 4, 40
	server := newCountingServer(t)
	server.gate = make(chan struct{})
	client := NewClient(server.addr(), testOptions(connections))
	defer client.Close()

	done := make(chan []error)
	go func() { done <- callAll(client, callers) }()
	// Every connection is busy and the other callers queue behind them.
	server.waitEntered(t, connections)
	waitForWaiters(t, client, callers-connections)
	close(server.gate)
	for i, err := range <-done {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if got := server.accepted.Load(); got != connections {
		t.Errorf("server accepted %d connections, want %d", got, connections)
	}
	if got := server.maxInFlight.Load(); got > connections {
		t.Errorf("%d calls ran at once on %d connections", got, connections)
	}

	// Idle connections are kept: a second burst opens none.
	for i, err := range callAll(client, callers) {
		if err != nil {
			t.Errorf("second burst, call %d: %v", i, err)
		}
	}
	if got := server.accepted.Load(); got != connections {
		t.Errorf("after a second burst the server accepted %d connections, want the %d kept", got, connections)
	}
}

func TestWaiterGetsTheReturnedConnection(t *testing.T) {
	server := newCountingServer(t)
	server.gate = make(chan struct{})
	client := NewClient(server.addr(), testOptions(1))
	defer client.Close()

	first := make(chan error)
	go func() { first <- callOnce(context.Background(), client, 1) }()
	server.waitEntered(t, 1)
	second := make(chan error)
	go func() { second <- callOnce(context.Background(), client, 2) }()
	waitForWaiters(t, client, 1)

	close(server.gate)
	if err := <-first; err != nil {
		t.Fatalf("first call: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("waiting call: %v", err)
	}
	if got := server.accepted.Load(); got != 1 {
		t.Errorf("server accepted %d connections, want the one handed from the first call to the second", got)
	}
}

func TestWaiterTimesOutNamingTargetAndWait(t *testing.T) {
	server := newCountingServer(t)
	server.gate = make(chan struct{})
	opts := testOptions(1)
	opts.WaitTimeout = 150 * time.Millisecond
	client := NewClient(server.addr(), opts)
	defer client.Close()

	held := make(chan error)
	go func() { held <- callOnce(context.Background(), client, 1) }()
	server.waitEntered(t, 1)

	start := time.Now()
	err := callOnce(context.Background(), client, 2)
	waited := time.Since(start)
	if !errors.Is(err, ErrPoolExhausted) {
		t.Fatalf("call with every connection busy: %v, want ErrPoolExhausted", err)
	}
	for _, want := range []string{server.addr(), "150ms", "all 1 connections in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if waited < opts.WaitTimeout {
		t.Errorf("gave up after %s, before the %s wait", waited, opts.WaitTimeout)
	}

	close(server.gate)
	if err := <-held; err != nil {
		t.Errorf("the call holding the connection: %v", err)
	}
	if server.calls.Load() != 1 {
		t.Errorf("server ran %d calls, want only the one that had the connection", server.calls.Load())
	}
}

func TestWaiterStopsWithItsContextAndWithClose(t *testing.T) {
	server := newCountingServer(t)
	server.gate = make(chan struct{})
	client := NewClient(server.addr(), testOptions(1))

	held := make(chan error)
	go func() { held <- callOnce(context.Background(), client, 1) }()
	server.waitEntered(t, 1)

	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error)
	go func() { cancelled <- callOnce(ctx, client, 2) }()
	waitForWaiters(t, client, 1)
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), server.addr()) {
		t.Errorf("cancelled waiter: %v, want context.Canceled naming %s", err, server.addr())
	}

	closed := make(chan error)
	go func() { closed <- callOnce(context.Background(), client, 3) }()
	waitForWaiters(t, client, 1)
	client.Close()
	if err := <-closed; !errors.Is(err, ErrClientClosed) {
		t.Errorf("waiter on a closed client: %v, want ErrClientClosed", err)
	}
	close(server.gate)
	if err := <-held; err != nil {
		t.Errorf("the call in flight at Close: %v", err)
	}
	if err := callOnce(context.Background(), client, 4); !errors.Is(err, ErrClientClosed) {
		t.Errorf("call after Close: %v, want ErrClientClosed", err)
	}
}

func TestBrokenConnectionIsNotReused(t *testing.T) {
	server := newCountingServer(t)
	server.breakConns.Store(1)
	// One connection: had the broken one kept its place, the next call
	// would wait for it in vain.
	opts := testOptions(1)
	opts.WaitTimeout = time.Second
	client := NewClient(server.addr(), opts)
	defer client.Close()

	if err := callOnce(context.Background(), client, 1); err == nil || !strings.Contains(err.Error(), server.addr()) {
		t.Fatalf("call on a connection the server dropped: %v, want an error naming %s", err, server.addr())
	}
	for i := range 3 {
		if err := callOnce(context.Background(), client, int64(2+i)); err != nil {
			t.Fatalf("call %d after the broken one: %v", 2+i, err)
		}
	}
	if got := server.accepted.Load(); got != 2 {
		t.Errorf("server accepted %d connections, want 2: the broken one and one replacing it", got)
	}
}

func TestUnansweredCallTimesOutAndDropsItsConnection(t *testing.T) {
	server := newCountingServer(t)
	server.gate = make(chan struct{})
	opts := testOptions(1)
	opts.CallTimeout = 200 * time.Millisecond
	client := NewClient(server.addr(), opts)
	defer client.Close()

	start := time.Now()
	err := callOnce(context.Background(), client, 1)
	if err == nil || !strings.Contains(err.Error(), server.addr()) || !strings.Contains(err.Error(), "i/o timeout") {
		t.Fatalf("call the upstream does not answer: %v, want an i/o timeout naming %s", err, server.addr())
	}
	if took := time.Since(start); took < opts.CallTimeout {
		t.Errorf("gave up after %s, before the %s call timeout", took, opts.CallTimeout)
	}
	// The late answer must not be read as the next call's.
	close(server.gate)
	if err := callOnce(context.Background(), client, 2); err != nil {
		t.Fatalf("call after the timed-out one: %v", err)
	}
	if got := server.accepted.Load(); got != 2 {
		t.Errorf("server accepted %d connections, want 2: the timed-out one is not reused", got)
	}
}

func TestIdleConnectionClosedByUpstreamIsReplaced(t *testing.T) {
	server := newCountingServer(t)
	client := NewClient(server.addr(), testOptions(2))
	defer client.Close()
	// Check every idle connection, not only those idle for a second.
	client.onlyPool().checkIdleAfter = 0

	if err := callOnce(context.Background(), client, 1); err != nil {
		t.Fatal(err)
	}
	// The upstream restarts: the pooled connection sees its FIN while idle.
	server.closeConns()
	if err := callOnce(context.Background(), client, 2); err != nil {
		t.Fatalf("call after the upstream closed the idle connection: %v", err)
	}
	if got := server.accepted.Load(); got != 2 {
		t.Errorf("server accepted %d connections, want 2", got)
	}
}

func TestConnectWaitsForABusyUpstreamBeyondTwoSeconds(t *testing.T) {
	ln := fullBacklogListener(t)
	// The SYN retransmitted 3 s after the first finds room once the
	// listener starts accepting; a 2 s connect timeout gave up before.
	const acceptAfter = 2500 * time.Millisecond
	serverReady := make(chan *countingServer, 1)
	time.AfterFunc(acceptAfter, func() { serverReady <- startCountingServer(t, ln) })

	client := NewClient(ln.Addr().String(), testOptions(1))
	defer client.Close()
	start := time.Now()
	err := callOnce(context.Background(), client, 7)
	took := time.Since(start)
	server := <-serverReady
	if err != nil {
		t.Fatalf("call to an upstream that accepts after %s: %v", acceptAfter, err)
	}
	if took < 2*time.Second {
		t.Errorf("connect took %s: the listener's queue was not full, the test shows nothing", took)
	}
	// The filler and the pool's connection.
	if got := server.accepted.Load(); got != 2 {
		t.Errorf("server accepted %d connections, want 2", got)
	}
}

func TestConnectTimeoutNamesTarget(t *testing.T) {
	ln := fullBacklogListener(t)
	defer ln.Close()
	opts := testOptions(1)
	opts.ConnectTimeout = 300 * time.Millisecond
	client := NewClient(ln.Addr().String(), opts)
	defer client.Close()

	start := time.Now()
	err := callOnce(context.Background(), client, 1)
	if err == nil {
		t.Fatal("connect to a listener that never accepts succeeded")
	}
	for _, want := range []string{"connect " + ln.Addr().String(), "300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if took := time.Since(start); took < opts.ConnectTimeout {
		t.Errorf("gave up after %s, before the %s connect timeout", took, opts.ConnectTimeout)
	}
	// The failed connect gave its slot back.
	if n := len(client.onlyPool().slots); n != 0 {
		t.Errorf("%d slots still taken after the failed connect", n)
	}
}

func TestReplicasShareCallsRoundRobin(t *testing.T) {
	a, b := newCountingServer(t), newCountingServer(t)
	client := NewClient(a.addr()+", "+b.addr(), testOptions(1))
	defer client.Close()
	for i := range 10 {
		if err := callOnce(context.Background(), client, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if a.calls.Load() != 5 || b.calls.Load() != 5 {
		t.Errorf("calls per replica %d and %d, want 5 and 5", a.calls.Load(), b.calls.Load())
	}
	if a.accepted.Load() != 1 || b.accepted.Load() != 1 {
		t.Errorf("connections per replica %d and %d, want one each, reused", a.accepted.Load(), b.accepted.Load())
	}
}

func TestOptionsDefaultToDeathStarBenchs(t *testing.T) {
	client := NewClient("127.0.0.1:1", Options{WaitTimeout: time.Second})
	defer client.Close()
	got := client.onlyPool().opts
	want := Options{Connections: 512, WaitTimeout: time.Second, ConnectTimeout: 10 * time.Second, CallTimeout: 30 * time.Second}
	if got != want {
		t.Errorf("options %+v, want %+v (unset fields from DefaultOptions)", got, want)
	}
	if cap(client.onlyPool().slots) != 512 {
		t.Errorf("pool bounded at %d connections, want 512", cap(client.onlyPool().slots))
	}
}

// onlyPool is the pool of a client of one address.
func (c *Client) onlyPool() *pool { return c.set.Load().pools[0] }

// A replica that moved: the client is pointed at the new list, keeps its
// connection to the replica still listed, drops the one no longer listed,
// and calls only what is listed now; with a placeholder (nothing
// registered), calls fail naming it, and a later list works again.
func TestSetAddrFollowsAMovedReplica(t *testing.T) {
	a, b, c := newCountingServer(t), newCountingServer(t), newCountingServer(t)
	client := NewClient(a.addr()+","+b.addr(), testOptions(1))
	defer client.Close()
	for i := range 4 {
		if err := callOnce(context.Background(), client, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	client.SetAddr(a.addr() + "," + c.addr())
	if client.Addr() != a.addr()+","+c.addr() {
		t.Errorf("Addr %q after the move", client.Addr())
	}
	for i := range 4 {
		if err := callOnce(context.Background(), client, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if a.calls.Load() != 4 || b.calls.Load() != 2 || c.calls.Load() != 2 {
		t.Errorf("calls a %d, b %d (gone after 2), c %d; want 4, 2, 2", a.calls.Load(), b.calls.Load(), c.calls.Load())
	}
	if a.accepted.Load() != 1 {
		t.Errorf("the replica that stayed was dialled %d times, want its connection kept", a.accepted.Load())
	}
	client.SetAddr("127.0.0.1:1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := callOnce(ctx, client, 9); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("a call to the placeholder: %v", err)
	}
	client.SetAddr(c.addr())
	if err := callOnce(context.Background(), client, 10); err != nil || c.calls.Load() != 3 {
		t.Errorf("after the replica is registered again: %v, c has %d calls", err, c.calls.Load())
	}
}
