// Package servicecmd is what the DeathStarBench ports' binaries (socialnet,
// hotelres, mediamicro) share around their services: the common flags,
// which services one process runs and where it listens, the logger, and
// running until a signal while the orchestrator's upstream file is watched.
package servicecmd

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/orchbench/orchbench/deathstarbench/internal/envdefault"
	"github.com/orchbench/orchbench/deathstarbench/internal/gctune"
	"github.com/orchbench/orchbench/deathstarbench/internal/upstreams"
)

// Port describes one application's services to its binary.
type Port struct {
	// Binary names the command in messages.
	Binary string
	// Services are every service's name; Frontend is the HTTP one.
	Services []string
	Frontend string
	// FrontendListen and ServiceListen are the default listen addresses,
	// the original's ports.
	FrontendListen, ServiceListen string
	// AddrEnv names the variable holding a service's address.
	AddrEnv func(service string) string
}

// Flags are the flags every port's binary has; Register adds them.
type Flags struct {
	Service, ListenAddr, LogLevel, UpstreamsFile *string
	// Addrs are the --<service>-addr flags, per upstream service.
	Addrs map[string]*string
}

// Register adds the common flags to fs, with defaults from the environment.
func (p Port) Register(fs *flag.FlagSet) *Flags {
	f := &Flags{Addrs: map[string]*string{}}
	f.Service = fs.String("service", envdefault.String("SERVICE", ""), "service to run: "+strings.Join(p.Services, ", ")+", or all (env SERVICE)")
	f.ListenAddr = fs.String("listen-addr", envdefault.String("LISTEN_ADDR", ""),
		fmt.Sprintf("listen address; default %s for %s, %s otherwise (the original's), or :$PORT when PORT is set (env LISTEN_ADDR)", p.FrontendListen, p.Frontend, p.ServiceListen))
	f.LogLevel = fs.String("log-level", envdefault.String("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	f.UpstreamsFile = fs.String("upstreams-file", envdefault.String("UPSTREAMS_FILE", ""), "env file (KEY=VALUE lines) the orchestrator renders upstream addresses into; a changed upstream is taken in place, a changed store address makes the process run itself again (env UPSTREAMS_FILE)")
	for _, name := range p.Services {
		if name == p.Frontend {
			continue
		}
		env := p.AddrEnv(name)
		f.Addrs[name] = fs.String(name+"-addr", envdefault.String(env, ""), "host:port of the "+name+" service, comma-separated for several instances (env "+env+")")
	}
	return f
}

// UpstreamAddrs are the upstream addresses given, by service.
func (f *Flags) UpstreamAddrs() map[string]string {
	addrs := map[string]string{}
	for name, addr := range f.Addrs {
		if *addr != "" {
			addrs[name] = *addr
		}
	}
	return addrs
}

// Logger is the process's logger at the flag's level; it also sets Go's
// soft memory limit from the cgroup's.
func (f *Flags) Logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(*f.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if soft := gctune.Apply(gctune.CgroupLimitFiles); soft > 0 {
		logger.Info("soft memory limit from the cgroup", "bytes", soft)
	}
	return logger, nil
}

// Selection returns the services this process runs and their listen
// addresses: one service at the flag's address, or with "all" every
// service, the front end at the flag's address and the rest on ephemeral
// loopback ports (they find each other in-process).
func (p Port) Selection(f *Flags) (names []string, listenAddrs map[string]string, err error) {
	listenAddrs = map[string]string{}
	switch *f.Service {
	case "":
		return nil, nil, fmt.Errorf("--service is required (one of %s, or all)", strings.Join(p.Services, ", "))
	case "all":
		listenAddrs[p.Frontend] = p.listen(*f.ListenAddr, p.Frontend)
		return slices.Clone(p.Services), listenAddrs, nil
	default:
		if !slices.Contains(p.Services, *f.Service) {
			return nil, nil, fmt.Errorf("--service %q: want one of %s, or all", *f.Service, strings.Join(p.Services, ", "))
		}
		listenAddrs[*f.Service] = p.listen(*f.ListenAddr, *f.Service)
		return []string{*f.Service}, listenAddrs, nil
	}
}

func (p Port) listen(flagValue, service string) string {
	if flagValue != "" {
		return flagValue
	}
	if port := os.Getenv("PORT"); port != "" {
		return ":" + port
	}
	if service == p.Frontend {
		return p.FrontendListen
	}
	return p.ServiceListen
}

// Running is a port's started services.
type Running interface {
	// Wait blocks until ctx ends or a server fails.
	Wait(ctx context.Context) error
	Stop()
	// SetUpstream points the clients of upstream service name at addr;
	// false when the process calls no such service.
	SetUpstream(name, addr string) bool
}

// Run starts the services with start and serves until SIGINT or SIGTERM.
// With an upstreams file, a changed upstream address is handed to the
// running services, and a changed store address makes the process run
// itself again. The watcher starts before the services: a service waits
// for its store while the orchestrator has not rendered the store's address
// yet, and the new address must reach it (by running again) meanwhile.
func (p Port) Run(f *Flags, logger *slog.Logger, start func(ctx context.Context) (Running, error)) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var running atomic.Pointer[Running]
	if *f.UpstreamsFile != "" {
		apply := func(key, value string) bool {
			r := running.Load()
			if r == nil {
				return false
			}
			for _, name := range p.Services {
				if p.AddrEnv(name) == key {
					return (*r).SetUpstream(name, value)
				}
			}
			return false
		}
		go func() {
			if err := upstreams.Watch(ctx, *f.UpstreamsFile, upstreams.PollInterval, logger, apply, upstreams.ExecSelf); err != nil {
				logger.Error("cannot start again with the new upstream addresses", "error", err)
				os.Exit(1)
			}
		}()
	}
	r, err := start(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while waiting for stores
		}
		return err
	}
	running.Store(&r)
	defer r.Stop()
	logger.Info(p.Binary+" ready", "service", *f.Service)
	return r.Wait(ctx)
}

// Main runs a binary's run function and exits non-zero with its error.
func Main(binary string, run func(args []string) error) {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, binary+":", err)
		os.Exit(1)
	}
}
