package mediamicroservices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/rpc"
)

// Running is a set of started services.
type Running struct {
	// Addrs maps each started service to its bound address.
	Addrs map[string]string

	cancel   context.CancelFunc
	stops    []func()
	storage  *storageSet
	upstream *upstreamSet
	errs     chan error
}

// Start starts the named services, each on its own listener. Those without
// an address in listenAddrs bind an ephemeral loopback port, and the
// services of one process call each other at their bound addresses
// (overriding settings.Addrs). A service listens only once its stores
// answer, so its health check fails until then; Start returns when every
// service listens.
func Start(ctx context.Context, names []string, listenAddrs map[string]string, settings Settings) (*Running, error) {
	if settings.Logger == nil {
		settings.Logger = slog.Default()
	}
	if settings.StoreRetry <= 0 {
		settings.StoreRetry = 2 * time.Second
	}
	for _, name := range names {
		if _, ok := Upstreams[name]; !ok {
			return nil, fmt.Errorf("unknown service %q (want one of %s, or all)", name, strings.Join(ServiceNames(), ", "))
		}
	}
	running := &Running{
		Addrs:    map[string]string{},
		storage:  newStorageSet(settings),
		upstream: &upstreamSet{settings: settings},
		errs:     make(chan error, len(names)),
	}
	ctx, running.cancel = context.WithCancel(ctx)
	fail := func(err error) (*Running, error) {
		running.Stop()
		return nil, err
	}

	// Every address is bound first: a port in use fails at once, and the
	// services of one process learn each other's addresses. A fixed port
	// is let go again until its service's stores answer (a bound socket
	// accepts connections into its backlog before anyone serves them); an
	// ephemeral one stays bound, as nobody else knows it.
	held := map[string]net.Listener{}
	for _, name := range names {
		addr := listenAddrs[name]
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		running.Addrs[name] = l.Addr().String()
		if _, port, _ := net.SplitHostPort(addr); port != "0" {
			l.Close()
			continue
		}
		held[name] = l
		running.stops = append(running.stops, func() { l.Close() })
	}
	addrs := map[string]string{}
	for name, addr := range settings.Addrs {
		addrs[name] = addr
	}
	for name, addr := range running.Addrs {
		addrs[name] = addr
	}
	settings.Addrs = addrs
	running.upstream.settings = settings
	running.storage.settings = settings

	// The front end last: it serves as soon as it listens, and its
	// upstreams should be serving by then.
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int {
		return boolInt(a == ServiceFrontend) - boolInt(b == ServiceFrontend)
	})
	for _, name := range order {
		err := running.storage.waitReady(ctx, name, settings.StoreRetry, func(err error) {
			settings.Logger.Warn("stores not answering yet; listening once they do", "service", name, "error", err)
		})
		if err != nil {
			return fail(fmt.Errorf("%s: waiting for its stores: %w", name, err))
		}
		built, err := buildService(ctx, name, settings, running.storage, running.upstream)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		if err := running.serve(name, built, held[name]); err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
	}
	settings.Logger.Info("services started", "addrs", running.Addrs)
	return running, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// serve starts serving built on the held listener, or on a new one at the
// service's address.
func (r *Running) serve(name string, built builtService, held net.Listener) error {
	addr := r.Addrs[name]
	if built.http != nil {
		l := held
		if l == nil {
			var err error
			if l, err = net.Listen("tcp", addr); err != nil {
				return err
			}
		}
		server := &http.Server{Handler: built.http, ReadHeaderTimeout: 10 * time.Second}
		r.stops = append(r.stops, func() {
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			server.Shutdown(shutdownCtx)
		})
		go func() {
			if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				r.errs <- fmt.Errorf("%s: %w", name, err)
			}
		}()
		return nil
	}
	if held != nil {
		// Thrift's server socket binds its own listener: hand the
		// ephemeral port over.
		held.Close()
	}
	l, err := rpc.Listen(addr)
	if err != nil {
		return err
	}
	r.stops = append(r.stops, func() { l.Stop() })
	go func() {
		if err := l.Serve(built.processor); err != nil {
			r.errs <- fmt.Errorf("%s: %w", name, err)
		}
	}()
	return nil
}

// Wait blocks until ctx ends or a server fails.
func (r *Running) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-r.errs:
		return err
	}
}

// SetUpstream points this process's clients of upstream service name at
// addr (comma-separated replicas) from their next call on; false when the
// process calls no such service.
func (r *Running) SetUpstream(name, addr string) bool { return r.upstream.set(name, addr) }

// Stop stops every service and closes storage and upstream clients.
func (r *Running) Stop() {
	r.cancel()
	r.upstream.Close()
	for _, stop := range slices.Backward(r.stops) {
		stop()
	}
	r.storage.Close()
}
