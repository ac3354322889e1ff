// Command ferretdb runs FerretDB (a MongoDB wire-protocol server) on its
// SQLite backend. It wraps FerretDB's embeddable package rather than FerretDB's
// own command, whose version file is generated at release time and is missing
// when the module is built from the Go proxy. Being pure Go (modernc SQLite),
// it builds with CGO_ENABLED=0 into a static binary for FROM-scratch images.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// defaultSQLiteParams trade durability on power loss (not on a crash of
// the process) for write throughput, as suits a benchmark's data: in WAL
// mode synchronous=NORMAL skips the fsync per commit. Immediate
// transactions take the write lock up front, so an update's read-then-write
// does not fail to upgrade its lock under concurrency.
const defaultSQLiteParams = "_txlock=immediate&_pragma=synchronous(normal)"

func main() {
	listenAddr := flag.String("listen-addr", envOr("FERRETDB_LISTEN_ADDR", "127.0.0.1:27017"), "TCP address for the MongoDB wire protocol (env FERRETDB_LISTEN_ADDR)")
	dataDir := flag.String("data-dir", envOr("FERRETDB_DATA_DIR", "data"), "directory holding one SQLite file per database (env FERRETDB_DATA_DIR)")
	sqliteParams := flag.String("sqlite-params", envOr("FERRETDB_SQLITE_PARAMS", defaultSQLiteParams), "query parameters of the SQLite URI (env FERRETDB_SQLITE_PARAMS)")
	logLevel := flag.String("log-level", envOr("FERRETDB_LOG_LEVEL", "warn"), "debug, info, warn or error (env FERRETDB_LOG_LEVEL)")
	seedDir := flag.String("seed-dir", envOr("FERRETDB_SEED_DIR", ""), "SQLite files copied into --data-dir when it holds no database yet (env FERRETDB_SEED_DIR); dataset-snapshot images set it")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb: bad --log-level:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if err := run(*listenAddr, *dataDir, *seedDir, *sqliteParams, logger); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listenAddr, dataDir, seedDir, sqliteParams string, logger *slog.Logger) error {
	absDir, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		return err
	}
	if seedDir != "" {
		seeded, err := seed(absDir, seedDir)
		if err != nil {
			return fmt.Errorf("seeding %s from %s: %w", absDir, seedDir, err)
		}
		if seeded {
			logger.Warn("seeded the data dir", "data_dir", absDir, "seed_dir", seedDir)
		}
	}

	// FerretDB wants a SQLite URI naming a directory; the trailing slash matters.
	server, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: listenAddr},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + absDir + "/?" + sqliteParams,
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger.Warn("ferretdb listening", "addr", listenAddr, "data_dir", absDir)
	return server.Run(ctx)
}

func envOr(name, fallback string) string {
	if value, ok := os.LookupEnv(name); ok && value != "" {
		return value
	}
	return fallback
}
