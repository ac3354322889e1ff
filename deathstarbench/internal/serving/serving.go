// Package serving keeps the servers of a DeathStarBench port's services
// running in one process: it binds their addresses, serves each, reports
// the first to fail, and stops them all.
package serving

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"time"
)

// Group is the servers of one process.
type Group struct {
	// Addrs maps each service to its bound address.
	Addrs map[string]string

	held  map[string]net.Listener
	stops []func()
	errs  chan error
}

// Bind binds every service's address first, so that a port in use fails at
// once and the services of one process learn each other's addresses; a
// service without an address binds an ephemeral loopback port. An
// ephemeral listener is held for the service (nobody else knows its port);
// a fixed one is released when releaseFixed says so, to be bound again
// when the service is ready (a bound socket accepts connections into its
// backlog before anyone serves them, so a health check would pass).
func Bind(names []string, listenAddrs map[string]string, releaseFixed func(name string) bool) (*Group, error) {
	g := &Group{Addrs: map[string]string{}, held: map[string]net.Listener{}, errs: make(chan error, len(names))}
	for _, name := range names {
		addr := listenAddrs[name]
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			g.Stop()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		g.Addrs[name] = l.Addr().String()
		if _, port, _ := net.SplitHostPort(addr); port != "0" && releaseFixed(name) {
			l.Close()
			continue
		}
		g.held[name] = l
		g.OnStop(func() { l.Close() })
	}
	return g, nil
}

// Over returns the upstream addresses given with the group's own over
// them: the services of one process call each other where they are bound.
func (g *Group) Over(given map[string]string) map[string]string {
	addrs := maps.Clone(given)
	if addrs == nil {
		addrs = map[string]string{}
	}
	maps.Copy(addrs, g.Addrs)
	return addrs
}

// Listener is service name's listener: the one held since Bind, or a new
// one on its address.
func (g *Group) Listener(name string) (net.Listener, error) {
	if l := g.held[name]; l != nil {
		delete(g.held, name)
		return l, nil
	}
	return net.Listen("tcp", g.Addrs[name])
}

// Release closes the listener held for name, for a server that binds its
// address itself (Thrift's), and returns the address.
func (g *Group) Release(name string) string {
	if l := g.held[name]; l != nil {
		l.Close()
		delete(g.held, name)
	}
	return g.Addrs[name]
}

// OnStop runs stop when the group stops, after the stops added later.
func (g *Group) OnStop(stop func()) { g.stops = append(g.stops, stop) }

// Go runs serve; an error it returns, other than ignore, is the group's
// failure.
func (g *Group) Go(name string, serve func() error, ignore error) {
	go func() {
		if err := serve(); err != nil && (ignore == nil || !errors.Is(err, ignore)) {
			g.errs <- fmt.Errorf("%s: %w", name, err)
		}
	}()
}

// ServeHTTP serves handler on service name's listener until the group
// stops, letting requests in flight finish for up to 5 s.
func (g *Group) ServeHTTP(name string, handler http.Handler) error {
	l, err := g.Listener(name)
	if err != nil {
		return err
	}
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	g.OnStop(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		server.Shutdown(ctx)
	})
	g.Go(name, func() error { return server.Serve(l) }, http.ErrServerClosed)
	return nil
}

// Wait blocks until ctx ends or a server fails.
func (g *Group) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-g.errs:
		return err
	}
}

// Stop stops every server, the last started first.
func (g *Group) Stop() {
	for _, stop := range slices.Backward(g.stops) {
		stop()
	}
	g.stops = nil
}
