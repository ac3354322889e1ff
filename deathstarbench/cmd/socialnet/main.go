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
	"log/slog"
	"net/http"
	_ "net/http/pprof" // served only on --debug-addr
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/internal/envdefault"
	"github.com/orchbench/orchbench/deathstarbench/internal/gctune"
	"github.com/orchbench/orchbench/deathstarbench/internal/uniqueid"
	"github.com/orchbench/orchbench/deathstarbench/internal/upstreams"
	"github.com/orchbench/orchbench/deathstarbench/socialnetwork"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "socialnet:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	flags := flag.NewFlagSet("socialnet", flag.ContinueOnError)
	service := flags.String("service", envdefault.String("SERVICE", ""), "service to run: "+strings.Join(socialnetwork.ServiceNames(), ", ")+", or all (env SERVICE)")
	listenAddr := flags.String("listen-addr", envdefault.String("LISTEN_ADDR", ""), "listen address; default :8080 for frontend, :9090 otherwise, or :$PORT when PORT is set (env LISTEN_ADDR)")
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
	logLevel := flags.String("log-level", envdefault.String("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	upstreamsFile := flags.String("upstreams-file", envdefault.String("UPSTREAMS_FILE", ""), "env file (KEY=VALUE lines) the orchestrator renders upstream addresses into; when it names addresses this process did not start with, the process runs itself again with them (env UPSTREAMS_FILE)")
	debugAddr := flags.String("debug-addr", envdefault.String("DEBUG_ADDR", ""), "TCP address serving Go's pprof handlers under /debug/pprof/, for profiling a service under load; empty serves none (env DEBUG_ADDR)")
	addrs := map[string]*string{}
	for _, name := range socialnetwork.ServiceNames() {
		if name == socialnetwork.ServiceFrontend {
			continue
		}
		envName := socialnetwork.AddrEnv(name)
		addrs[name] = flags.String(name+"-addr", envdefault.String(envName, ""), "host:port of the "+name+" service (env "+envName+")")
	}
	if err := flags.Parse(args); err != nil {
		return err
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if soft := gctune.Apply(gctune.CgroupLimitFiles); soft > 0 {
		logger.Info("soft memory limit from the cgroup", "bytes", soft)
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
		Addrs:          map[string]string{},
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
	for name, addr := range addrs {
		if *addr != "" {
			settings.Addrs[name] = *addr
		}
	}

	var names []string
	listenAddrs := map[string]string{}
	switch *service {
	case "":
		return fmt.Errorf("--service is required (one of %s, or all)", strings.Join(socialnetwork.ServiceNames(), ", "))
	case "all":
		// The front end takes the listen address; the rest bind ephemeral
		// loopback ports and find each other in-process.
		names = socialnetwork.ServiceNames()
		listenAddrs[socialnetwork.ServiceFrontend] = defaultListen(*listenAddr, socialnetwork.ServiceFrontend)
		if settings.JWTSecret == "" {
			settings.JWTSecret = "local-development-secret"
		}
	default:
		if settings.StorageMode == "memory" && *service == socialnetwork.ServiceUserMention {
			return fmt.Errorf("--storage memory needs --service all: user-mention reads the user service's store")
		}
		names = []string{*service}
		listenAddrs[*service] = defaultListen(*listenAddr, *service)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	running, err := socialnetwork.Start(ctx, names, listenAddrs, settings)
	if err != nil {
		return err
	}
	defer running.Stop()
	if *upstreamsFile != "" {
		go func() {
			if err := upstreams.Watch(ctx, *upstreamsFile, upstreams.PollInterval, logger, upstreamSetter(running), upstreams.ExecSelf); err != nil {
				logger.Error("cannot start again with the new upstream addresses", "error", err)
				os.Exit(1)
			}
		}()
	}
	logger.Info("socialnet ready", "service", *service, "addrs", running.Addrs)
	return running.Wait(ctx)
}

func defaultListen(flagValue, service string) string {
	if flagValue != "" {
		return flagValue
	}
	if port := os.Getenv("PORT"); port != "" {
		return ":" + port
	}
	if service == socialnetwork.ServiceFrontend {
		return ":8080"
	}
	return ":9090"
}

// upstreamSetter applies a changed <SERVICE>_ADDR to the running services'
// clients of that service; any other variable is not an upstream's.
func upstreamSetter(running *socialnetwork.Running) func(key, value string) bool {
	return func(key, value string) bool {
		for _, name := range socialnetwork.ServiceNames() {
			if socialnetwork.AddrEnv(name) == key {
				return running.SetUpstream(name, value)
			}
		}
		return false
	}
}
