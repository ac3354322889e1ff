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
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/hotelreservation"
	"github.com/orchbench/orchbench/deathstarbench/internal/envdefault"
	"github.com/orchbench/orchbench/deathstarbench/internal/gctune"
	"github.com/orchbench/orchbench/deathstarbench/internal/upstreams"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hotelres:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	flags := flag.NewFlagSet("hotelres", flag.ContinueOnError)
	service := flags.String("service", envdefault.String("SERVICE", ""), "service to run: "+strings.Join(hotelreservation.ServiceNames(), ", ")+", or all (env SERVICE)")
	listenAddr := flags.String("listen-addr", envdefault.String("LISTEN_ADDR", ""), "listen address; default :5000 for frontend (the original's), :8080 otherwise, or :$PORT when PORT is set (env LISTEN_ADDR)")
	storageMode := flags.String("storage", envdefault.String("STORAGE", "external"), "external (MongoDB/FerretDB and memcached) or memory (in-process; each process its own data) (env STORAGE)")
	mongoURI := flags.String("mongodb-uri", envdefault.String("MONGODB_URI", ""), "MongoDB or FerretDB URI, e.g. mongodb://127.0.0.1:27017/ (env MONGODB_URI)")
	memcachedAddr := flags.String("memcached-addr", envdefault.String("MEMCACHED_ADDR", ""), "memcached host:port, comma-separated for several, of profile, rate and reservation (env MEMCACHED_ADDR)")
	callTimeout := flags.Duration("call-timeout", envdefault.Duration("CALL_TIMEOUT", 30*time.Second), "bounds the front end's gRPC calls behind one request (env CALL_TIMEOUT)")
	channels := flags.Int("grpc-channels", int(envdefault.Int("GRPC_CHANNELS", 4)), "gRPC channels (HTTP/2 connections, round robin over every instance each) kept to each upstream (env GRPC_CHANNELS)")
	poolSize := flags.Int("pool-size", int(envdefault.Int("POOL_SIZE", 64)), "connections per storage client: MongoDB, memcached (env POOL_SIZE)")
	logLevel := flags.String("log-level", envdefault.String("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	upstreamsFile := flags.String("upstreams-file", envdefault.String("UPSTREAMS_FILE", ""), "env file (KEY=VALUE lines) the orchestrator renders upstream addresses into; a changed upstream is taken in place, a changed store address makes the process run itself again (env UPSTREAMS_FILE)")
	addrs := map[string]*string{}
	for _, name := range hotelreservation.ServiceNames() {
		if name == hotelreservation.ServiceFrontend {
			continue
		}
		envName := hotelreservation.AddrEnv(name)
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

	settings := hotelreservation.Settings{
		Addrs:        map[string]string{},
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
	for name, addr := range addrs {
		if *addr != "" {
			settings.Addrs[name] = *addr
		}
	}

	var names []string
	listenAddrs := map[string]string{}
	switch *service {
	case "":
		return fmt.Errorf("--service is required (one of %s, or all)", strings.Join(hotelreservation.ServiceNames(), ", "))
	case "all":
		// The front end takes the listen address; the rest bind ephemeral
		// loopback ports and find each other in-process.
		names = hotelreservation.ServiceNames()
		listenAddrs[hotelreservation.ServiceFrontend] = defaultListen(*listenAddr, hotelreservation.ServiceFrontend)
	default:
		if _, ok := hotelreservation.Upstreams[*service]; !ok {
			return fmt.Errorf("--service %q: want one of %s, or all", *service, strings.Join(hotelreservation.ServiceNames(), ", "))
		}
		names = []string{*service}
		listenAddrs[*service] = defaultListen(*listenAddr, *service)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The watcher starts before the services: a service waits for its
	// store while the orchestrator has not rendered the store's address
	// yet, and the new address must reach it (by running again) meanwhile.
	var running atomic.Pointer[hotelreservation.Running]
	if *upstreamsFile != "" {
		apply := func(key, value string) bool {
			r := running.Load()
			if r == nil {
				return false
			}
			for _, name := range hotelreservation.ServiceNames() {
				if hotelreservation.AddrEnv(name) == key {
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
	r, err := hotelreservation.Start(ctx, names, listenAddrs, settings)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	running.Store(r)
	defer r.Stop()
	logger.Info("hotelres ready", "service", *service, "addrs", r.Addrs)
	return r.Wait(ctx)
}

func defaultListen(flagValue, service string) string {
	if flagValue != "" {
		return flagValue
	}
	if port := os.Getenv("PORT"); port != "" {
		return ":" + port
	}
	if service == hotelreservation.ServiceFrontend {
		return ":5000"
	}
	return ":8080"
}
