// Command hotelres runs the services of DeathStarBench's hotel reservation:
// one service per process (--service NAME), as deployed on a cluster, or
// every service in one process (--service all) for tests and a quick look
// (with --storage memory, no store at all).
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

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation"
	"github.com/orchbench/orchbench/deathstarbench/internal/envdefault"
	"github.com/orchbench/orchbench/deathstarbench/internal/servicecmd"
)

var port = servicecmd.Port{
	Binary:         "hotelres",
	Services:       hotelreservation.ServiceNames(),
	Frontend:       hotelreservation.ServiceFrontend,
	FrontendListen: ":5000",
	ServiceListen:  ":8080",
	AddrEnv:        hotelreservation.AddrEnv,
}

func main() { servicecmd.Main(port.Binary, run) }

func run(args []string) error {
	flags := flag.NewFlagSet(port.Binary, flag.ContinueOnError)
	common := port.Register(flags)
	storageMode := flags.String("storage", envdefault.String("STORAGE", "external"), "external (MongoDB/FerretDB and memcached) or memory (in-process; each process its own data) (env STORAGE)")
	mongoURI := flags.String("mongodb-uri", envdefault.String("MONGODB_URI", ""), "MongoDB or FerretDB URI, e.g. mongodb://127.0.0.1:27017/ (env MONGODB_URI)")
	memcachedAddr := flags.String("memcached-addr", envdefault.String("MEMCACHED_ADDR", ""), "memcached host:port, comma-separated for several, of profile, rate and reservation (env MEMCACHED_ADDR)")
	callTimeout := flags.Duration("call-timeout", envdefault.Duration("CALL_TIMEOUT", 30*time.Second), "bounds the front end's gRPC calls behind one request (env CALL_TIMEOUT)")
	channels := flags.Int("grpc-channels", int(envdefault.Int("GRPC_CHANNELS", 4)), "gRPC channels (HTTP/2 connections, round robin over every instance each) kept to each upstream (env GRPC_CHANNELS)")
	poolSize := flags.Int("pool-size", int(envdefault.Int("POOL_SIZE", 64)), "connections per storage client: MongoDB, memcached (env POOL_SIZE)")
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
	settings := hotelreservation.Settings{
		Addrs:        common.UpstreamAddrs(),
		StorageMode:  *storageMode,
		MongoURI:     *mongoURI,
		CallTimeout:  *callTimeout,
		GRPCChannels: *channels,
		PoolSize:     *poolSize,
		Logger:       logger,
	}
	if *memcachedAddr != "" {
		settings.MemcachedAddr = strings.Split(*memcachedAddr, ",")
	}
	names, listenAddrs, err := port.Selection(common)
	if err != nil {
		return err
	}
	return port.Run(common, logger, func(ctx context.Context) (servicecmd.Running, error) {
		return hotelreservation.Start(ctx, names, listenAddrs, settings)
	})
}
