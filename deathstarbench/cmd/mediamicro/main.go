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
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/envdefault"
	"github.com/orchbench/orchbench/deathstarbench/internal/gctune"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	"github.com/orchbench/orchbench/deathstarbench/internal/upstreams"
	"github.com/orchbench/orchbench/deathstarbench/mediamicroservices"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mediamicro:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	flags := flag.NewFlagSet("mediamicro", flag.ContinueOnError)
	service := flags.String("service", envdefault.String("SERVICE", ""), "service to run: "+strings.Join(mediamicroservices.ServiceNames(), ", ")+", or all (env SERVICE)")
	listenAddr := flags.String("listen-addr", envdefault.String("LISTEN_ADDR", ""), "listen address; default :8080 for frontend, :9090 otherwise (the original's), or :$PORT when PORT is set (env LISTEN_ADDR)")
	storageMode := flags.String("storage", envdefault.String("STORAGE", "external"), "external (MongoDB/FerretDB, memcached, Redis) or memory (in-process; each process its own data) (env STORAGE)")
	mongoURI := flags.String("mongodb-uri", envdefault.String("MONGODB_URI", ""), "MongoDB or FerretDB URI, e.g. mongodb://127.0.0.1:27017/ (env MONGODB_URI)")
	memcachedAddr := flags.String("memcached-addr", envdefault.String("MEMCACHED_ADDR", ""), "the service's memcached host:port, comma-separated for several (env MEMCACHED_ADDR)")
	redisAddr := flags.String("redis-addr", envdefault.String("REDIS_ADDR", ""), "the service's Redis host:port (env REDIS_ADDR)")
	machineID := flags.Int64("machine-id", envdefault.Int("MACHINE_ID", -1), "replica ID 0..1023 in review and user IDs; default derived from the host name (env MACHINE_ID)")
	rpcTimeout := flags.Duration("rpc-timeout", envdefault.Duration("RPC_TIMEOUT", 10*time.Second), "bounds the wait for a free Thrift connection when all --rpc-connections are in use, and the connect (env RPC_TIMEOUT)")
	callTimeout := flags.Duration("call-timeout", envdefault.Duration("CALL_TIMEOUT", 30*time.Second), "bounds each Thrift call's socket reads and writes, and the front end's calls behind one request (env CALL_TIMEOUT)")
	rpcConnections := flags.Int("rpc-connections", int(envdefault.Int("RPC_CONNECTIONS", 512)), "most connections open to each upstream address; callers beyond wait for a free one (env RPC_CONNECTIONS)")
	poolSize := flags.Int("pool-size", int(envdefault.Int("POOL_SIZE", 64)), "connections per storage client: MongoDB, memcached, Redis (env POOL_SIZE)")
	logLevel := flags.String("log-level", envdefault.String("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	upstreamsFile := flags.String("upstreams-file", envdefault.String("UPSTREAMS_FILE", ""), "env file (KEY=VALUE lines) the orchestrator renders upstream addresses into; a changed upstream is taken in place, a changed store address makes the process run itself again (env UPSTREAMS_FILE)")
	addrs := map[string]*string{}
	for _, name := range mediamicroservices.ServiceNames() {
		if name == mediamicroservices.ServiceFrontend {
			continue
		}
		envName := mediamicroservices.AddrEnv(name)
		addrs[name] = flags.String(name+"-addr", envdefault.String(envName, ""), "host:port of the "+name+" service, comma-separated for several instances (env "+envName+")")
	}
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if soft := gctune.Apply(gctune.CgroupLimitFiles); soft > 0 {
		logger.Info("soft memory limit from the cgroup", "bytes", soft)
	}
	if *storageMode != "external" && *storageMode != "memory" {
		return fmt.Errorf("--storage %q: want external or memory", *storageMode)
	}

	if *machineID < 0 {
		*machineID = uniqueid.MachineIDFromHostname()
	}
	settings := mediamicroservices.Settings{
		Addrs:          map[string]string{},
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
	for name, addr := range addrs {
		if *addr != "" {
			settings.Addrs[name] = *addr
		}
	}

	var names []string
	listenAddrs := map[string]string{}
	switch *service {
	case "":
		return fmt.Errorf("--service is required (one of %s, or all)", strings.Join(mediamicroservices.ServiceNames(), ", "))
	case "all":
		// The front end takes the listen address; the rest bind ephemeral
		// loopback ports and find each other in-process.
		names = mediamicroservices.ServiceNames()
		listenAddrs[mediamicroservices.ServiceFrontend] = defaultListen(*listenAddr, mediamicroservices.ServiceFrontend)
	default:
		if _, ok := mediamicroservices.Upstreams[*service]; !ok {
			return fmt.Errorf("--service %q: want one of %s, or all", *service, strings.Join(mediamicroservices.ServiceNames(), ", "))
		}
		names = []string{*service}
		listenAddrs[*service] = defaultListen(*listenAddr, *service)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The watcher starts before the services: a service waits for its
	// store while the orchestrator has not rendered the store's address
	// yet, and the new address must reach it (by running again) meanwhile.
	var running atomic.Pointer[mediamicroservices.Running]
	if *upstreamsFile != "" {
		apply := func(key, value string) bool {
			r := running.Load()
			if r == nil {
				return false
			}
			for _, name := range mediamicroservices.ServiceNames() {
				if mediamicroservices.AddrEnv(name) == key {
					return r.SetUpstream(name, value)
				}
			}
			return false
		}
		go func() {
			if err := upstreams.Watch(ctx, *upstreamsFile, upstreams.PollInterval, logger, apply, upstreams.ExecSelf); err != nil {
				logger.Error("cannot start again with the new upstream addresses", "error", err)
				os.Exit(1)
			}
		}()
	}
	r, err := mediamicroservices.Start(ctx, names, listenAddrs, settings)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	running.Store(r)
	defer r.Stop()
	logger.Info("mediamicro ready", "service", *service, "addrs", r.Addrs)
	return r.Wait(ctx)
}

func defaultListen(flagValue, service string) string {
	if flagValue != "" {
		return flagValue
	}
	if port := os.Getenv("PORT"); port != "" {
		return ":" + port
	}
	if service == mediamicroservices.ServiceFrontend {
		return ":8080"
	}
	return ":9090"
}
