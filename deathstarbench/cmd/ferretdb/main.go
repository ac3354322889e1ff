// Command ferretdb runs FerretDB (a MongoDB wire-protocol server) on its
// SQLite backend, or on its PostgreSQL backend with --handler postgresql.
// It wraps FerretDB's embeddable package rather than FerretDB's own command,
// whose version file is generated at release time and is missing when the
// module is built from the Go proxy. Being pure Go (modernc SQLite),
// it builds with CGO_ENABLED=0 into a static binary for FROM-scratch images.
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
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"

	"github.com/orchbench/orchbench/deathstarbench/internal/gctune"
)

// defaultSQLiteParams trade durability on power loss (not on a crash of
// the process) for write throughput, as suits a benchmark's data: in WAL
// mode synchronous=NORMAL skips the fsync per commit. Immediate
// transactions take the write lock up front, so an update's read-then-write
// does not fail to upgrade its lock under concurrency.
const defaultSQLiteParams = "_txlock=immediate&_pragma=synchronous(normal)"

// flags are the command's flags.
type flags struct {
	listenAddr, dataDir, seedDir, sqliteParams string
	handler, postgresqlURL                     string
}

func main() {
	var opts flags
	flag.StringVar(&opts.listenAddr, "listen-addr", envOr("FERRETDB_LISTEN_ADDR", "127.0.0.1:27017"), "TCP address for the MongoDB wire protocol (env FERRETDB_LISTEN_ADDR)")
	flag.StringVar(&opts.handler, "handler", envOr("FERRETDB_HANDLER", "sqlite"), "storage backend: sqlite (files in --data-dir) or postgresql (a server at --postgresql-url) (env FERRETDB_HANDLER)")
	flag.StringVar(&opts.dataDir, "data-dir", envOr("FERRETDB_DATA_DIR", "data"), "sqlite: directory holding one SQLite file per database (env FERRETDB_DATA_DIR)")
	flag.StringVar(&opts.sqliteParams, "sqlite-params", envOr("FERRETDB_SQLITE_PARAMS", defaultSQLiteParams), "sqlite: query parameters of the SQLite URI (env FERRETDB_SQLITE_PARAMS)")
	flag.StringVar(&opts.seedDir, "seed-dir", envOr("FERRETDB_SEED_DIR", ""), "sqlite: SQLite files copied into --data-dir when it holds no database yet (env FERRETDB_SEED_DIR); dataset-snapshot images set it")
	flag.StringVar(&opts.postgresqlURL, "postgresql-url", envOr("FERRETDB_POSTGRESQL_URL", ""), "postgresql: connection URL, e.g. postgres://ferretdb@127.0.0.1:5432/ferretdb (env FERRETDB_POSTGRESQL_URL)")
	logLevel := flag.String("log-level", envOr("FERRETDB_LOG_LEVEL", "warn"), "debug, info, warn or error (env FERRETDB_LOG_LEVEL)")
	debugAddr := flag.String("debug-addr", envOr("FERRETDB_DEBUG_ADDR", ""), "TCP address serving Go's pprof handlers under /debug/pprof/, for profiling the datastore under load; empty serves none (env FERRETDB_DEBUG_ADDR)")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb: bad --log-level:", err)
		os.Exit(2)
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, logger); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opts flags, logger *slog.Logger) error {
	switch opts.handler {
	case "sqlite":
		return runSQLite(ctx, opts, logger)
	case "postgresql":
		if opts.postgresqlURL == "" {
			return fmt.Errorf("--handler postgresql needs --postgresql-url")
		}
		return serve(ctx, &ferretdb.Config{
			Listener:      ferretdb.ListenerConfig{TCP: opts.listenAddr},
			Logger:        logger,
			Handler:       "postgresql",
			PostgreSQLURL: opts.postgresqlURL,
		}, logger, "postgresql")
	default:
		return fmt.Errorf("--handler %q: want sqlite or postgresql", opts.handler)
	}
}

func runSQLite(ctx context.Context, opts flags, logger *slog.Logger) error {
	absDir, err := filepath.Abs(opts.dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		return err
	}
	if opts.seedDir != "" {
		seeded, err := seed(absDir, opts.seedDir)
		if err != nil {
			return fmt.Errorf("seeding %s from %s: %w", absDir, opts.seedDir, err)
		}
		if seeded {
			logger.Warn("seeded the data dir", "data_dir", absDir, "seed_dir", opts.seedDir)
		}
	}

	registerBusyHandler()

	// Seeded or restarted data is indexed before the first request.
	indexer := newIDIndexer(absDir, opts.sqliteParams, logger)
	defer indexer.close()
	indexed, err := indexer.pass(ctx)
	if err != nil {
		return fmt.Errorf("indexing FerretDB's _id filter: %w", err)
	}
	logger.Warn("indexed FerretDB's _id filter in the existing collections", "tables", indexed)
	go indexer.run(ctx, defaultIDIndexEvery)

	// FerretDB wants a SQLite URI naming a directory; the trailing slash matters.
	return serve(ctx, &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: opts.listenAddr},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + absDir + "/?" + opts.sqliteParams,
	}, logger, absDir)
}

func serve(ctx context.Context, config *ferretdb.Config, logger *slog.Logger, storage string) error {
	server, err := ferretdb.New(config)
	if err != nil {
		return err
	}
	logger.Warn("ferretdb listening", "addr", config.Listener.TCP, "handler", config.Handler, "storage", storage)
	return server.Run(ctx)
}

func envOr(name, fallback string) string {
	if value, ok := os.LookupEnv(name); ok && value != "" {
		return value
	}
	return fallback
}
