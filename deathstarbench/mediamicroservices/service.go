package mediamicroservices

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/rpc"
)

// Service names, as in DeathStarBench (without its "-service" suffix).
const (
	ServiceFrontend      = "frontend"
	ServiceUniqueID      = "unique-id"
	ServiceMovieID       = "movie-id"
	ServiceText          = "text"
	ServiceRating        = "rating"
	ServiceUser          = "user"
	ServiceComposeReview = "compose-review"
	ServiceReviewStorage = "review-storage"
	ServiceUserReview    = "user-review"
	ServiceMovieReview   = "movie-review"
	ServiceCastInfo      = "cast-info"
	ServicePlot          = "plot"
	ServiceMovieInfo     = "movie-info"
	ServicePage          = "page"
)

// Upstreams lists, per service, the services it calls.
var Upstreams = map[string][]string{
	ServiceFrontend: {ServiceUser, ServiceMovieID, ServiceText, ServiceUniqueID, ServiceCastInfo, ServicePlot,
		ServiceMovieInfo, ServicePage, ServiceUserReview, ServiceRating},
	ServiceUniqueID:      {ServiceComposeReview},
	ServiceMovieID:       {ServiceComposeReview, ServiceRating},
	ServiceText:          {ServiceComposeReview},
	ServiceRating:        {ServiceComposeReview},
	ServiceUser:          {ServiceComposeReview},
	ServiceComposeReview: {ServiceReviewStorage, ServiceUserReview, ServiceMovieReview},
	ServiceReviewStorage: nil,
	ServiceUserReview:    {ServiceReviewStorage},
	ServiceMovieReview:   {ServiceReviewStorage},
	ServiceCastInfo:      nil,
	ServicePlot:          nil,
	ServiceMovieInfo:     nil,
	ServicePage:          {ServiceMovieInfo, ServiceCastInfo, ServicePlot, ServiceMovieReview},
}

// Storage lists, per service, the tiers it uses: "mongodb", "memcached",
// "redis", each the service's own, as the original deploys them.
var Storage = map[string][]string{
	ServiceMovieID:       {"mongodb", "memcached"},
	ServiceRating:        {"redis"},
	ServiceUser:          {"mongodb", "memcached"},
	ServiceComposeReview: {"memcached"},
	ServiceReviewStorage: {"mongodb", "memcached"},
	ServiceUserReview:    {"mongodb", "redis"},
	ServiceMovieReview:   {"mongodb", "redis"},
	ServiceCastInfo:      {"mongodb", "memcached"},
	ServicePlot:          {"mongodb", "memcached"},
	ServiceMovieInfo:     {"mongodb", "memcached"},
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
// COMPOSE_REVIEW_ADDR.
func AddrEnv(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_")) + "_ADDR"
}

// Settings configure one service process (or, for "all", every service).
type Settings struct {
	// Addrs maps upstream service name to host:port (comma-separated for
	// several instances).
	Addrs map[string]string
	// StorageMode is "external" (MongoDB/FerretDB, memcached, Redis) or
	// "memory" (in-process, each service its own).
	StorageMode   string
	MongoURI      string
	MemcachedAddr []string
	RedisAddr     string
	// MachineID is this replica's 10-bit ID for review and user IDs.
	MachineID int64
	// RPCTimeout bounds the wait for a free pooled Thrift connection and
	// the connect; RPCCallTimeout each call's reads and writes, and the
	// front end's calls behind one request; RPCConnections the connections
	// to each upstream address. Zero keeps rpc.DefaultOptions.
	RPCTimeout     time.Duration
	RPCCallTimeout time.Duration
	RPCConnections int
	// PoolSize bounds the connections of each storage client.
	PoolSize int
	// StoreRetry is the pause between probes of stores not answering yet.
	StoreRetry time.Duration
	Logger     *slog.Logger
}

// upstreamSet builds Thrift clients for upstream services.
type upstreamSet struct {
	settings Settings
	clients  rpc.Clients
}

func (u *upstreamSet) client(name string) (*rpc.Client, error) {
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
