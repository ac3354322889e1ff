package mediamicroservices

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/rpc"
	"github.com/orchbench/orchbench/deathstarbench/internal/serving"
)

// Running is a set of started services.
type Running struct {
	*serving.Group

	cancel   context.CancelFunc
	storage  *storageSet
	upstream *upstreamSet
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
	group, err := serving.Bind(names, listenAddrs, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	settings.Addrs = group.Over(settings.Addrs)
	running := &Running{Group: group, storage: newStorageSet(settings), upstream: &upstreamSet{settings: settings}}
	ctx, running.cancel = context.WithCancel(ctx)
	fail := func(err error) (*Running, error) {
		running.Stop()
		return nil, err
	}

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
		if err := running.serve(name, built); err != nil {
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

func (r *Running) serve(name string, built builtService) error {
	if built.http != nil {
		return r.ServeHTTP(name, built.http)
	}
	// Thrift's server socket binds its own listener.
	l, err := rpc.Listen(r.Release(name))
	if err != nil {
		return err
	}
	r.OnStop(func() { l.Stop() })
	r.Go(name, func() error { return l.Serve(built.processor) }, nil)
	return nil
}

// SetUpstream points this process's clients of upstream service name at
// addr (comma-separated replicas) from their next call on; false when the
// process calls no such service.
func (r *Running) SetUpstream(name, addr string) bool { return r.upstream.set(name, addr) }

// Stop stops every service and closes storage and upstream clients.
func (r *Running) Stop() {
	r.cancel()
	r.upstream.Close()
	r.Group.Stop()
	r.storage.Close()
}
