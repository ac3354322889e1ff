package socialnetwork

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/orchbench/orchbench/deathstarbench/internal/rpc"
	"github.com/orchbench/orchbench/deathstarbench/internal/serving"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// Service names, as in DeathStarBench (without its "-service" suffix).
const (
	ServiceFrontend     = "frontend"
	ServiceComposePost  = "compose-post"
	ServiceText         = "text"
	ServiceURLShorten   = "url-shorten"
	ServiceUserMention  = "user-mention"
	ServiceMedia        = "media"
	ServiceUniqueID     = "unique-id"
	ServiceUser         = "user"
	ServiceSocialGraph  = "social-graph"
	ServicePostStorage  = "post-storage"
	ServiceUserTimeline = "user-timeline"
	ServiceHomeTimeline = "home-timeline"
)

// Upstreams lists, per service, the services it calls.
var Upstreams = map[string][]string{
	ServiceFrontend:     {ServiceComposePost, ServiceUser, ServiceSocialGraph, ServiceUserTimeline, ServiceHomeTimeline},
	ServiceComposePost:  {ServiceUniqueID, ServiceUser, ServiceText, ServiceMedia, ServicePostStorage, ServiceUserTimeline, ServiceHomeTimeline},
	ServiceText:         {ServiceURLShorten, ServiceUserMention},
	ServiceURLShorten:   nil,
	ServiceUserMention:  nil,
	ServiceMedia:        nil,
	ServiceUniqueID:     nil,
	ServiceUser:         {ServiceSocialGraph},
	ServiceSocialGraph:  {ServiceUser},
	ServicePostStorage:  nil,
	ServiceUserTimeline: {ServicePostStorage},
	ServiceHomeTimeline: {ServiceSocialGraph, ServicePostStorage},
}

// Storage lists, per service, the tiers it uses: "mongodb", "memcached", "redis".
var Storage = map[string][]string{
	ServiceURLShorten:   {"mongodb", "memcached"},
	ServiceUserMention:  {"mongodb", "memcached"}, // the user service's
	ServiceUser:         {"mongodb", "memcached"},
	ServiceSocialGraph:  {"mongodb", "redis"},
	ServicePostStorage:  {"mongodb", "memcached"},
	ServiceUserTimeline: {"mongodb", "redis"},
	ServiceHomeTimeline: {"redis"},
}

// MongoDatabase is the database (and collection) each service keeps its
// documents in; user-mention reads the user service's.
var MongoDatabase = map[string]string{
	ServiceURLShorten:   "url-shorten",
	ServiceUserMention:  "user",
	ServiceUser:         "user",
	ServiceSocialGraph:  "social-graph",
	ServicePostStorage:  "post",
	ServiceUserTimeline: "user-timeline",
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

// Settings configure one service process (or, for "all", every service).
type Settings struct {
	// ListenAddr is where the service listens (HTTP for the front end,
	// Thrift for the rest).
	ListenAddr string
	// Addrs maps upstream service name to host:port.
	Addrs map[string]string
	// StorageMode is "external" (MongoDB/FerretDB, memcached, Redis) or
	// "memory" (in-process maps; only meaningful with every service in
	// one process, since the user-mention service reads the user service's
	// store).
	StorageMode   string
	MongoURI      string
	MemcachedAddr []string
	RedisAddr     string
	// JWTSecret signs login tokens (user service) and verifies them (front
	// end).
	JWTSecret string
	// MachineID is this replica's 10-bit ID for unique-id and user IDs.
	MachineID int64
	// RPCTimeout bounds the wait for a free pooled Thrift connection and
	// the connect, each (10 s by default, DeathStarBench's timeout_ms).
	// RPCCallTimeout bounds each call's socket reads and writes, and the
	// front end's calls behind one request (30 s by default: the original's
	// sockets have no bound, and a call into a queue of slow upstreams must
	// not fail before the request it serves). RPCConnections bounds the
	// connections to each upstream address (512 by default, the original's
	// "connections"). Zero keeps the default.
	RPCTimeout     time.Duration
	RPCCallTimeout time.Duration
	RPCConnections int
	// PoolSize bounds the connections of each storage client (MongoDB,
	// memcached, Redis).
	PoolSize int
	Logger   *slog.Logger
}

// upstreamSet builds Thrift clients for upstream services.
type upstreamSet struct {
	settings Settings
	clients  rpc.Clients
}

func (u *upstreamSet) pool(name string) (*rpc.Client, error) {
	addr := u.settings.Addrs[name]
	if addr == "" {
		return nil, fmt.Errorf("no address for upstream %s (--%s-addr or %s)", name, name, AddrEnv(name))
	}
	return u.clients.New(name, addr, rpc.Options{
		Connections:    u.settings.RPCConnections,
		WaitTimeout:    u.settings.RPCTimeout,
		ConnectTimeout: u.settings.RPCTimeout,
		CallTimeout:    u.settings.RPCCallTimeout,
	}), nil
}

// set points every client of upstream service name at addr; false when
// this process has none.
func (u *upstreamSet) set(name, addr string) bool { return u.clients.SetAddr(name, addr) }

func (u *upstreamSet) Close() { u.clients.Close() }

// AddrEnv is the environment variable naming a service's address, e.g.
// SOCIAL_GRAPH_ADDR.
func AddrEnv(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_")) + "_ADDR"
}

// Handlers returned by buildService: a Thrift processor, or for the front
// end an HTTP handler.
type builtService struct {
	processor thrift.TProcessor
	http      http.Handler
}

func buildService(ctx context.Context, name string, settings Settings, storage *storageSet, up *upstreamSet) (builtService, error) {
	var errs []error
	client := func(service string) *rpc.Client {
		pool, err := up.pool(service)
		if err != nil {
			errs = append(errs, err)
			return rpc.NewClient("", rpc.DefaultOptions())
		}
		return pool
	}
	coll := func() store.Collection {
		c, err := storage.collection(ctx, MongoDatabase[name])
		if err != nil {
			errs = append(errs, err)
		}
		return c
	}
	memcached := func() store.Cache {
		c, err := storage.memcached(MongoDatabase[name])
		if err != nil {
			errs = append(errs, err)
		}
		return c
	}
	timelines := func() store.Timelines {
		t, err := storage.timelines()
		if err != nil {
			errs = append(errs, err)
		}
		return t
	}

	var built builtService
	switch name {
	case ServiceFrontend:
		if settings.JWTSecret == "" {
			errs = append(errs, errors.New("no JWT secret configured (--jwt-secret or JWT_SECRET): the front end verifies login tokens with the user service's key"))
		}
		built.http = (&Frontend{
			ComposePost:  sn.NewComposePostServiceClient(client(ServiceComposePost)),
			User:         sn.NewUserServiceClient(client(ServiceUser)),
			SocialGraph:  sn.NewSocialGraphServiceClient(client(ServiceSocialGraph)),
			UserTimeline: sn.NewUserTimelineServiceClient(client(ServiceUserTimeline)),
			HomeTimeline: sn.NewHomeTimelineServiceClient(client(ServiceHomeTimeline)),
			Secret:       []byte(settings.JWTSecret),
			CallTimeout:  settings.RPCCallTimeout,
			Logger:       settings.Logger,
		}).Handler()
	case ServiceComposePost:
		built.processor = sn.NewComposePostServiceProcessor(&ComposePostService{
			UniqueID:     sn.NewUniqueIdServiceClient(client(ServiceUniqueID)),
			User:         sn.NewUserServiceClient(client(ServiceUser)),
			Text:         sn.NewTextServiceClient(client(ServiceText)),
			Media:        sn.NewMediaServiceClient(client(ServiceMedia)),
			PostStorage:  sn.NewPostStorageServiceClient(client(ServicePostStorage)),
			UserTimeline: sn.NewUserTimelineServiceClient(client(ServiceUserTimeline)),
			HomeTimeline: sn.NewHomeTimelineServiceClient(client(ServiceHomeTimeline)),
		})
	case ServiceText:
		built.processor = sn.NewTextServiceProcessor(&TextService{
			URLShorten:  sn.NewUrlShortenServiceClient(client(ServiceURLShorten)),
			UserMention: sn.NewUserMentionServiceClient(client(ServiceUserMention)),
		})
	case ServiceURLShorten:
		built.processor = sn.NewUrlShortenServiceProcessor(&URLShortenService{URLs: coll(), Cache: memcached()})
	case ServiceUserMention:
		built.processor = sn.NewUserMentionServiceProcessor(&UserMentionService{Users: coll(), Cache: memcached()})
	case ServiceMedia:
		built.processor = sn.NewMediaServiceProcessor(MediaService{})
	case ServiceUniqueID:
		built.processor = sn.NewUniqueIdServiceProcessor(&UniqueIDService{IDs: uniqueid.New(settings.MachineID)})
	case ServiceUser:
		secret := settings.JWTSecret
		if secret == "" {
			errs = append(errs, errors.New("no JWT secret configured (--jwt-secret or JWT_SECRET)"))
		}
		built.processor = sn.NewUserServiceProcessor(&UserService{
			Users:       coll(),
			Cache:       memcached(),
			SocialGraph: sn.NewSocialGraphServiceClient(client(ServiceSocialGraph)),
			IDs:         uniqueid.New(settings.MachineID),
			Secret:      []byte(secret),
			TokenTTL:    time.Hour,
		})
	case ServiceSocialGraph:
		cache, err := storage.redisCache()
		if err != nil {
			errs = append(errs, err)
		}
		graph := &SocialGraphService{Graph: coll(), Cache: cache, Users: sn.NewUserServiceClient(client(ServiceUser))}
		built.processor = sn.NewSocialGraphServiceProcessor(graph)
	case ServicePostStorage:
		built.processor = sn.NewPostStorageServiceProcessor(&PostStorageService{Posts: coll(), Cache: memcached(), MaxParallelReads: 16})
	case ServiceUserTimeline:
		built.processor = sn.NewUserTimelineServiceProcessor(&UserTimelineService{
			Timelines:   timelines(),
			Posts:       coll(),
			PostStorage: sn.NewPostStorageServiceClient(client(ServicePostStorage)),
		})
	case ServiceHomeTimeline:
		built.processor = sn.NewHomeTimelineServiceProcessor(&HomeTimelineService{
			Timelines:   timelines(),
			SocialGraph: sn.NewSocialGraphServiceClient(client(ServiceSocialGraph)),
			PostStorage: sn.NewPostStorageServiceClient(client(ServicePostStorage)),
		})
	default:
		return built, fmt.Errorf("unknown service %q (want one of %s, or all)", name, strings.Join(ServiceNames(), ", "))
	}
	return built, errors.Join(errs...)
}

// Running is a set of started services.
type Running struct {
	*serving.Group

	cancel   context.CancelFunc
	storage  *storageSet
	upstream *upstreamSet
}

// Start starts the named services, each on its own listener. With more
// than one, those whose ListenAddr is not in listenAddrs bind to an
// ephemeral loopback port, and the services call each other at their bound
// addresses (overriding settings.Addrs).
func Start(ctx context.Context, names []string, listenAddrs map[string]string, settings Settings) (*Running, error) {
	if settings.Logger == nil {
		settings.Logger = slog.Default()
	}
	group, err := serving.Bind(names, listenAddrs, func(string) bool { return false })
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

	for _, name := range names {
		built, err := buildService(ctx, name, settings, running.storage, running.upstream)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		if built.http != nil {
			if err := running.ServeHTTP(name, built.http); err != nil {
				return fail(fmt.Errorf("%s: %w", name, err))
			}
			continue
		}
		// Thrift's server socket binds its own listener.
		l, err := rpc.Listen(running.Release(name))
		if err != nil {
			return fail(fmt.Errorf("%s: %w", name, err))
		}
		running.OnStop(func() { l.Stop() })
		running.Go(name, func() error { return l.Serve(built.processor) }, nil)
	}
	settings.Logger.Info("services started", "addrs", running.Addrs)
	return running, nil
}

// SetUpstream points this process's clients of upstream service name at
// addr (comma-separated replicas) from their next call on, keeping the
// connections to replicas still listed; false when the process calls no
// such service.
func (r *Running) SetUpstream(name, addr string) bool { return r.upstream.set(name, addr) }

// Stop stops every service and closes storage and upstream clients.
func (r *Running) Stop() {
	r.cancel()
	r.upstream.Close()
	r.Group.Stop()
	r.storage.Close()
}
