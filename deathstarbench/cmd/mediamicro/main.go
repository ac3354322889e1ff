// Command mediamicro runs the services of DeathStarBench's media
// microservices: one service per process (--service NAME), as deployed on
// a cluster, or every service in one process (--service all) for tests and
// a quick look (with --storage memory, no store at all).
//
// Every flag can also be given as an environment variable (named in its
// help text), which is how a Nomad job fills them from Consul templates.
package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/envdefault"
	"github.com/orchbench/orchbench/deathstarbench/internal/servicecmd"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices"
)

var port = servicecmd.Port{
	Binary:         "mediamicro",
	Services:       mediamicroservices.ServiceNames(),
	Frontend:       mediamicroservices.ServiceFrontend,
	FrontendListen: ":8080",
	ServiceListen:  ":9090",
	AddrEnv:        mediamicroservices.AddrEnv,
}

func main() { servicecmd.Main(port.Binary, run) }

func run(args []string) error {
	flags := flag.NewFlagSet(port.Binary, flag.ContinueOnError)
	common := port.Register(flags)
	storageMode := flags.String("storage", envdefault.String("STORAGE", "external"), "external (MongoDB/FerretDB, memcached, Redis) or memory (in-process; each process its own data) (env STORAGE)")
	mongoURI := flags.String("mongodb-uri", envdefault.String("MONGODB_URI", ""), "MongoDB or FerretDB URI, e.g. mongodb://127.0.0.1:27017/ (env MONGODB_URI)")
	memcachedAddr := flags.String("memcached-addr", envdefault.String("MEMCACHED_ADDR", ""), "the service's memcached host:port, comma-separated for several (env MEMCACHED_ADDR)")
	redisAddr := flags.String("redis-addr", envdefault.String("REDIS_ADDR", ""), "the service's Redis host:port (env REDIS_ADDR)")
	machineID := flags.Int64("machine-id", envdefault.Int("MACHINE_ID", -1), "replica ID 0..1023 in review and user IDs; default derived from the host name (env MACHINE_ID)")
	rpcTimeout := flags.Duration("rpc-timeout", envdefault.Duration("RPC_TIMEOUT", 10*time.Second), "bounds the wait for a free Thrift connection when all --rpc-connections are in use, and the connect (env RPC_TIMEOUT)")
	callTimeout := flags.Duration("call-timeout", envdefault.Duration("CALL_TIMEOUT", 30*time.Second), "bounds each Thrift call's socket reads and writes, and the front end's calls behind one request (env CALL_TIMEOUT)")
	rpcConnections := flags.Int("rpc-connections", int(envdefault.Int("RPC_CONNECTIONS", 512)), "most connections open to each upstream address; callers beyond wait for a free one (env RPC_CONNECTIONS)")
	poolSize := flags.Int("pool-size", int(envdefault.Int("POOL_SIZE", 64)), "connections per storage client: MongoDB, memcached, Redis (env POOL_SIZE)")
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
	if *storageMode != "external" && *storageMode != "memory" {
		return fmt.Errorf("--storage %q: want external or memory", *storageMode)
	}
	if *machineID < 0 {
		*machineID = uniqueid.MachineIDFromHostname()
	}
	settings := mediamicroservices.Settings{
		Addrs:          common.UpstreamAddrs(),
		StorageMode:    *storageMode,
		MongoURI:       *mongoURI,
		RedisAddr:      *redisAddr,
		MachineID:      *machineID,
		RPCTimeout:     *rpcTimeout,
		RPCCallTimeout: *callTimeout,
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
	return port.Run(common, logger, func(ctx context.Context) (servicecmd.Running, error) {
		return mediamicroservices.Start(ctx, names, listenAddrs, settings)
	})
}
