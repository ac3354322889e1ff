// Package tcpbalance relays TCP connections to one of several backends, the
// role a load balancer plays in front of a highly available control plane
// (three Kubernetes API servers on the emulated nodes). It never looks
// inside a connection: TLS goes end to end, so clients verify the backend's
// own certificate.
//
// A connection goes to the next backend in turn. A backend whose dial fails
// is left out for Cooldown and the connection tries the next one, so the
// loss of a server costs a client one slow dial at most, not an error: a
// dead node's address does not refuse, it stays silent until DialTimeout.
package tcpbalance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Balancer relays connections accepted on a listener to Backends.
type Balancer struct {
	Backends    []string
	DialTimeout time.Duration
	Cooldown    time.Duration
	// Log receives one line per backend that goes down or comes back.
	Log func(format string, args ...any)

	mu        sync.Mutex
	next      int
	downUntil map[string]time.Time
	names     nameCache
}

// New checks the backends (host:port each, at least one).
func New(backends []string) (*Balancer, error) {
	if len(backends) == 0 {
		return nil, errors.New("tcp-balance: no --backend given")
	}
	seen := map[string]bool{}
	for _, b := range backends {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return nil, fmt.Errorf("tcp-balance: --backend %q: %w (host:port is needed)", b, err)
		}
		if seen[b] {
			return nil, fmt.Errorf("tcp-balance: --backend %s is given twice", b)
		}
		seen[b] = true
	}
	return &Balancer{Backends: backends, DialTimeout: 2 * time.Second, Cooldown: 5 * time.Second, downUntil: map[string]time.Time{}}, nil
}

// order is the backends to try for one connection: those not cooling down
// first, from the next in turn; the cooling ones last, so a connection still
// goes somewhere when every backend failed lately.
func (b *Balancer) order(now time.Time) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.Backends)
	start := b.next
	b.next = (b.next + 1) % n
	var up, cooling []string
	for i := 0; i < n; i++ {
		be := b.Backends[(start+i)%n]
		if now.Before(b.downUntil[be]) {
			cooling = append(cooling, be)
		} else {
			up = append(up, be)
		}
	}
	return append(up, cooling...)
}

func (b *Balancer) mark(backend string, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, wasDown := b.downUntil[backend]
	switch {
	case failed:
		b.downUntil[backend] = time.Now().Add(b.Cooldown)
		if !wasDown {
			b.logf("backend %s down", backend)
		}
	case wasDown:
		delete(b.downUntil, backend)
		b.logf("backend %s back", backend)
	}
}

func (b *Balancer) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

// dial connects to the first backend of the connection's order that answers.
func (b *Balancer) dial(ctx context.Context) (net.Conn, error) {
	var errs []error
	for _, be := range b.order(time.Now()) {
		d := net.Dialer{Timeout: b.DialTimeout}
		var c net.Conn
		var err error
		for _, addr := range b.names.addresses(ctx, be) {
			if c, err = d.DialContext(ctx, "tcp", addr); err == nil {
				break
			}
			errs = append(errs, err)
		}
		if err == nil {
			b.mark(be, false)
			return c, nil
		}
		b.mark(be, true)
	}
	return nil, fmt.Errorf("no backend answered: %w", errors.Join(errs...))
}

// Serve accepts until ctx ends or the listener fails.
func (b *Balancer) Serve(ctx context.Context, l net.Listener) error {
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go b.relay(ctx, c)
	}
}

func (b *Balancer) relay(ctx context.Context, client net.Conn) {
	defer client.Close()
	server, err := b.dial(ctx)
	if err != nil {
		b.logf("%s: %v", client.RemoteAddr(), err)
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// the other direction may still carry the rest of an answer
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	select {
	case <-done:
		<-done
	case <-ctx.Done():
	}
}
