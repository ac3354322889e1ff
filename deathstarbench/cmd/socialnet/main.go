// Command socialnet runs the services of the social network benchmark: one
// service per process (--service NAME), as deployed on a cluster, or every
// service in one process (--service all) for local runs.
//
// Every flag can also be given as an environment variable (named in its
// help text), which is how a Nomad job fills them from Consul templates.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	_ "net/http/pprof" // served only on --debug-addr
	"strings"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/envdefault"
	"github.com/orchbench/orchbench/deathstarbench/internal/servicecmd"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	"github.com/orchbench/orchbench/deathstarbench/socialnetwork"
)

var port = servicecmd.Port{
	Binary:         "socialnet",
	Services:       socialnetwork.ServiceNames(),
	Frontend:       socialnetwork.ServiceFrontend,
	FrontendListen: ":8080",
	ServiceListen:  ":9090",
	AddrEnv:        socialnetwork.AddrEnv,
}

func main() { servicecmd.Main(port.Binary, run) }

func run(args []string) error {
	flags := flag.NewFlagSet(port.Binary, flag.ContinueOnError)
	common := port.Register(flags)
	storageMode := flags.String("storage", envdefault.String("STORAGE", "external"), "external (MongoDB/FerretDB, memcached, Redis) or memory (only with --service all) (env STORAGE)")
	mongoURI := flags.String("mongodb-uri", envdefault.String("MONGODB_URI", ""), "MongoDB or FerretDB URI, e.g. mongodb://127.0.0.1:27017/ (env MONGODB_URI)")
	memcachedAddr := flags.String("memcached-addr", envdefault.String("MEMCACHED_ADDR", ""), "memcached host:port, comma-separated for several (env MEMCACHED_ADDR)")
	redisAddr := flags.String("redis-addr", envdefault.String("REDIS_ADDR", ""), "Redis host:port (env REDIS_ADDR)")
	jwtSecret := flags.String("jwt-secret", envdefault.String("JWT_SECRET", ""), "HMAC key of login tokens: the user service signs, the frontend verifies (env JWT_SECRET)")
	machineID := flags.Int64("machine-id", envdefault.Int("MACHINE_ID", -1), "replica ID 0..1023 in generated IDs; default derived from the host name (env MACHINE_ID)")
	rpcTimeout := flags.Duration("rpc-timeout", envdefault.Duration("RPC_TIMEOUT", 10*time.Second), "bounds the wait for a free Thrift connection when all --rpc-connections are in use, and the connect (env RPC_TIMEOUT)")
	rpcCallTimeout := flags.Duration("rpc-call-timeout", envdefault.Duration("RPC_CALL_TIMEOUT", 30*time.Second), "bounds each Thrift call's socket reads and writes, and the front end's calls behind one request (env RPC_CALL_TIMEOUT)")
	rpcConnections := flags.Int("rpc-connections", int(envdefault.Int("RPC_CONNECTIONS", 512)), "most connections open to each upstream address; callers beyond wait for a free one (env RPC_CONNECTIONS)")
	poolSize := flags.Int("pool-size", int(envdefault.Int("POOL_SIZE", 64)), "connections per storage client: MongoDB, memcached, Redis (env POOL_SIZE)")
	debugAddr := flags.String("debug-addr", envdefault.String("DEBUG_ADDR", ""), "TCP address serving Go's pprof handlers under /debug/pprof/, for profiling a service under load; empty serves none (env DEBUG_ADDR)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	logger, err := common.Logger()
	if err != nil {
		return err
	}
	if *debugAddr != "" {
		go func() {
			// pprof registered itself on the default mux.
			logger.Warn("debug handler stopped", "addr", *debugAddr, "error", http.ListenAndServe(*debugAddr, nil))
		}()
	}

	if *machineID < 0 {
		*machineID = uniqueid.MachineIDFromHostname()
	}
	settings := socialnetwork.Settings{
		Addrs:          common.UpstreamAddrs(),
		StorageMode:    *storageMode,
		MongoURI:       *mongoURI,
		RedisAddr:      *redisAddr,
		JWTSecret:      *jwtSecret,
		MachineID:      *machineID,
		RPCTimeout:     *rpcTimeout,
		RPCCallTimeout: *rpcCallTimeout,
		RPCConnections: *rpcConnections,
		PoolSize:       *poolSize,
		Logger:         logger,
	}
	if *memcachedAddr != "" {
		settings.MemcachedAddr = strings.Split(*memcachedAddr, ",")
	}
	names, listenAddrs, err := port.Selection(common)
	if err != nil {
		return err
	}
	switch {
	case *common.Service == "all" && settings.JWTSecret == "":
		settings.JWTSecret = "local-development-secret"
	case settings.StorageMode == "memory" && *common.Service == socialnetwork.ServiceUserMention:
		return fmt.Errorf("--storage memory needs --service all: user-mention reads the user service's store")
	}
	return port.Run(common, logger, func(ctx context.Context) (servicecmd.Running, error) {
		return socialnetwork.Start(ctx, names, listenAddrs, settings)
	})
}
