// Package hotelreservation is a Go port of DeathStarBench's hotel
// reservation: an HTTP front end over seven gRPC services (search, geo,
// rate, profile, recommendation, user, reservation) with MongoDB-compatible
// stores and memcached, as the version study 002 ran. Each service seeds
// its own collections with the original's data when it starts (insert
// what is missing, so replicas and restarts agree), and serves only once
// its data is in place.
package hotelreservation

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	hotelpb "github.com/orchbench/orchbench/deathstarbench/hotelreservation/proto"
	"github.com/orchbench/orchbench/deathstarbench/internal/serving"
)

// Service names, as in DeathStarBench's hotel reservation.
const (
	ServiceFrontend       = "frontend"
	ServiceSearch         = "search"
	ServiceGeo            = "geo"
	ServiceRate           = "rate"
	ServiceProfile        = "profile"
	ServiceRecommendation = "recommendation"
	ServiceUser           = "user"
	ServiceReservation    = "reservation"
)

// Upstreams lists, per service, the services it calls.
var Upstreams = map[string][]string{
	ServiceFrontend:       {ServiceSearch, ServiceProfile, ServiceRecommendation, ServiceUser, ServiceReservation},
	ServiceSearch:         {ServiceGeo, ServiceRate},
	ServiceGeo:            nil,
	ServiceRate:           nil,
	ServiceProfile:        nil,
	ServiceRecommendation: nil,
	ServiceUser:           nil,
	ServiceReservation:    nil,
}

// Storage lists, per service, the tiers it uses: "mongodb", "memcached".
var Storage = map[string][]string{
	ServiceGeo:            {"mongodb"},
	ServiceRate:           {"mongodb", "memcached"},
	ServiceProfile:        {"mongodb", "memcached"},
	ServiceRecommendation: {"mongodb"},
	ServiceUser:           {"mongodb"},
	ServiceReservation:    {"mongodb", "memcached"},
}

// MongoDatabase is the database each service keeps its collections in,
// the original's names.
var MongoDatabase = map[string]string{
	ServiceGeo:            "geo-db",
	ServiceRate:           "rate-db",
	ServiceProfile:        "profile-db",
	ServiceRecommendation: "recommendation-db",
	ServiceUser:           "user-db",
	ServiceReservation:    "reservation-db",
}

// ServiceNames returns every service name, sorted.
func ServiceNames() []string {
	names := make([]string, 0, len(Upstreams))
	for name := range Upstreams {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// AddrEnv is the environment variable naming a service's address, e.g.
// SEARCH_ADDR.
func AddrEnv(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_")) + "_ADDR"
}

// Settings configure one service process (or, for "all", every service).
type Settings struct {
	// Addrs maps upstream service name to a comma-separated host:port list.
	Addrs map[string]string
	// StorageMode is "external" (MongoDB/FerretDB and memcached) or
	// "memory" (in-process maps).
	StorageMode string
	MongoURI    string
	// MemcachedAddr is this process's memcached (the original gives
	// profile, rate and reservation one each); keys carry the service's
	// prefix, so one memcached can serve all three.
	MemcachedAddr []string
	// CallTimeout bounds the front end's calls behind one request.
	CallTimeout time.Duration
	// GRPCChannels is the gRPC channels kept to each upstream.
	GRPCChannels int
	// PoolSize bounds each storage client's connections.
	PoolSize int
	// SeedRetry is how often a service tries again to seed and read its
	// data while its store does not answer; 0 means 2 s.
	SeedRetry time.Duration
	Logger    *slog.Logger
}

// Running is a set of started services.
type Running struct {
	*serving.Group

	cancel   context.CancelFunc
	storage  *storageSet
	upstream *upstreamSet
}

// Start starts the named services. Each seeds and reads its data first,
// trying again while its store does not answer, and listens only then,
// so an instance that accepts connections has its data. With more than
// one service, those not in listenAddrs bind an ephemeral loopback port
// and the others call them there. Start returns when every service
// listens, or when ctx ends.
func Start(ctx context.Context, names []string, listenAddrs map[string]string, settings Settings) (*Running, error) {
	if settings.Logger == nil {
		settings.Logger = slog.Default()
	}
	if settings.CallTimeout <= 0 {
		settings.CallTimeout = 30 * time.Second
	}
	if settings.SeedRetry <= 0 {
		settings.SeedRetry = 2 * time.Second
	}
	for _, name := range names {
		if _, ok := Upstreams[name]; !ok {
			return nil, fmt.Errorf("unknown service %q (want one of %s, or all)", name, strings.Join(ServiceNames(), ", "))
		}
	}
	// A fixed port waits for its service's data; the front end has none.
	group, err := serving.Bind(names, listenAddrs, func(name string) bool { return name != ServiceFrontend })
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

	// The front end last: it serves as soon as it is built, and its
	// upstreams should be serving by then.
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int {
		return boolInt(a == ServiceFrontend) - boolInt(b == ServiceFrontend)
	})
	for _, name := range order {
		if name == ServiceFrontend {
			handler, err := newFrontend(settings, running.upstream)
			if err != nil {
				return fail(fmt.Errorf("%s: %w", name, err))
			}
			if err := running.ServeHTTP(name, handler); err != nil {
				return fail(fmt.Errorf("%s: %w", name, err))
			}
			continue
		}
		server := grpc.NewServer(
			grpc.KeepaliveParams(keepalive.ServerParameters{Timeout: 120 * time.Second}),
			grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{PermitWithoutStream: true}),
		)
		if err := register(ctx, server, name, settings, running.storage, running.upstream); err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		l, err := running.Listener(name)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		running.OnStop(server.Stop)
		running.Go(name, func() error { return server.Serve(l) }, grpc.ErrServerStopped)
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

// register builds service name, seeding and reading its data (retrying
// until ctx ends while the store does not answer), and registers it on
// server.
func register(ctx context.Context, server *grpc.Server, name string, settings Settings, storage *storageSet, up *upstreamSet) error {
	retrying := func(what string, f func(context.Context) error) error {
		for attempt := 1; ; attempt++ {
			attemptCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := f(attemptCtx)
			cancel()
			if err == nil {
				return nil
			}
			settings.Logger.Warn("cannot "+what+" yet; trying again", "service", name, "attempt", attempt, "error", err)
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), err)
			case <-time.After(settings.SeedRetry):
			}
		}
	}
	db := MongoDatabase[name]
	switch name {
	case ServiceSearch:
		geo, err := up.get(ServiceGeo)
		if err != nil {
			return err
		}
		rate, err := up.get(ServiceRate)
		if err != nil {
			return err
		}
		hotelpb.RegisterSearchServer(server, &searchService{geo: geo, rate: rate})
	case ServiceGeo:
		coll, err := storage.collection(ctx, db, "geo")
		if err != nil {
			return err
		}
		svc := &geoService{}
		if err := retrying("seed and read the geo points", func(ctx context.Context) error { return svc.load(ctx, coll) }); err != nil {
			return err
		}
		hotelpb.RegisterGeoServer(server, svc)
	case ServiceRate:
		coll, err := storage.collection(ctx, db, "inventory")
		if err != nil {
			return err
		}
		cache, err := storage.memcached()
		if err != nil {
			return err
		}
		if err := retrying("seed the rate plans", func(ctx context.Context) error { return seedRatePlans(ctx, coll) }); err != nil {
			return err
		}
		hotelpb.RegisterRateServer(server, &rateService{plans: coll, cache: cache, logger: settings.Logger})
	case ServiceProfile:
		coll, err := storage.collection(ctx, db, "hotels")
		if err != nil {
			return err
		}
		cache, err := storage.memcached()
		if err != nil {
			return err
		}
		if err := retrying("seed the hotel profiles", func(ctx context.Context) error { return seedProfiles(ctx, coll) }); err != nil {
			return err
		}
		hotelpb.RegisterProfileServer(server, &profileService{hotels: coll, cache: cache, logger: settings.Logger})
	case ServiceRecommendation:
		coll, err := storage.collection(ctx, db, "recommendation")
		if err != nil {
			return err
		}
		svc := &recommendationService{}
		if err := retrying("seed and read the recommendation data", func(ctx context.Context) error { return svc.load(ctx, coll) }); err != nil {
			return err
		}
		hotelpb.RegisterRecommendationServer(server, svc)
	case ServiceUser:
		coll, err := storage.collection(ctx, db, "user")
		if err != nil {
			return err
		}
		svc := &userService{}
		if err := retrying("seed and read the users", func(ctx context.Context) error { return svc.load(ctx, coll) }); err != nil {
			return err
		}
		hotelpb.RegisterUserServer(server, svc)
	case ServiceReservation:
		svc := &reservationService{logger: settings.Logger}
		var err error
		if svc.reservations, err = storage.collection(ctx, db, "reservation"); err != nil {
			return err
		}
		if svc.nights, err = storage.collection(ctx, db, "night"); err != nil {
			return err
		}
		if svc.capacities, err = storage.collection(ctx, db, "number"); err != nil {
			return err
		}
		if svc.cache, err = storage.memcached(); err != nil {
			return err
		}
		if err := retrying("seed the capacities and reservations", svc.seed); err != nil {
			return err
		}
		hotelpb.RegisterReservationServer(server, svc)
	default:
		return fmt.Errorf("unknown service %q", name)
	}
	return nil
}

// SetUpstream points this process's channels to upstream service name at
// addrs (comma-separated) from their next call on; false when the process
// calls no such service.
func (r *Running) SetUpstream(name, addrs string) bool { return r.upstream.set(name, addrs) }

// Stop stops every service and closes storage and upstream clients.
func (r *Running) Stop() {
	r.cancel()
	r.upstream.Close()
	r.Group.Stop()
	r.storage.Close()
}
