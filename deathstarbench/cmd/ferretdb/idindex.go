package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver FerretDB's SQLite backend registers too
)

// FerretDB 1.24's SQLite backend filters a document by _id with
// `_ferretdb_sjson->'$._id' = ?` (its metadata.IDColumn), but builds the
// collection's unique _id index on `_ferretdb_sjson->"_id"`. SQLite uses an
// expression index only for the same expression, and '$._id' and '_id' are
// different path strings, so every find, update or delete by _id scans the
// whole table and parses each document's JSON: measured at 6-30 ms of CPU
// per social network request, growing with the collection. An index on
// FerretDB's own filter expression turns those into index searches.
// FerretDB keeps its index list in its metadata table, so clients never see
// this index; SQLite drops it with its table.
const (
	idFilterExpr = `_ferretdb_sjson->'$._id'`
	// idIndexSuffix names the extra index; FerretDB names its own indexes
	// <table>_<client's index name>, which a client would have to call
	// exactly this to collide with.
	idIndexSuffix = "_orchbench_id_filter"
	// ferretdbMetadataTable lists a database's collections and their tables.
	ferretdbMetadataTable = "_ferretdb_collections"
	// defaultIDIndexEvery is how often new collections are looked for: a
	// collection scans by _id from its creation until then, while it is
	// small.
	defaultIDIndexEvery = time.Second
)

// idIndexer adds the _id filter index to every FerretDB table of the
// SQLite files in a directory.
type idIndexer struct {
	dir    string
	params string
	logger *slog.Logger

	dbs     map[string]*sql.DB     // by file name
	files   map[string]os.FileInfo // the file each of dbs opened
	indexed map[string]bool        // file name + "/" + table name
}

func newIDIndexer(dir, params string, logger *slog.Logger) *idIndexer {
	return &idIndexer{dir: dir, params: params, logger: logger,
		dbs: map[string]*sql.DB{}, files: map[string]os.FileInfo{}, indexed: map[string]bool{}}
}

// pass indexes every table not indexed yet and returns how many it indexed.
func (x *idIndexer) pass(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(x.dir)
	if err != nil {
		return 0, err
	}
	created := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".sqlite") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed since listed
		}
		n, err := x.indexFile(ctx, e.Name(), info)
		created += n
		if err != nil {
			return created, fmt.Errorf("%s: %w", e.Name(), err)
		}
	}
	return created, nil
}

func (x *idIndexer) indexFile(ctx context.Context, name string, info os.FileInfo) (int, error) {
	db := x.dbs[name]
	if db != nil && !os.SameFile(x.files[name], info) {
		// FerretDB dropped the database and made it again: a new file,
		// whose tables are not indexed yet.
		db.Close()
		db = nil
		for key := range x.indexed {
			if strings.HasPrefix(key, name+"/") {
				delete(x.indexed, key)
			}
		}
	}
	if db == nil {
		// The same parameters as FerretDB's connections, so this one
		// agrees on journal mode and locking; busy_timeout makes it wait
		// for FerretDB's writes rather than fail.
		uri := "file:" + filepath.Join(x.dir, name) + "?" + x.params + "&_pragma=busy_timeout(10000)"
		var err error
		if db, err = sql.Open("sqlite", uri); err != nil {
			return 0, err
		}
		db.SetMaxOpenConns(1)
		x.dbs[name], x.files[name] = db, info
	}
	tables, err := ferretdbTables(ctx, db)
	if err != nil {
		return 0, err
	}
	created := 0
	for _, table := range tables {
		key := name + "/" + table
		if x.indexed[key] {
			continue
		}
		index := table + idIndexSuffix
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (%s)`,
			quoteIdent(index), quoteIdent(table), idFilterExpr)); err != nil {
			return created, fmt.Errorf("index %s: %w", table, err)
		}
		x.indexed[key] = true
		created++
	}
	return created, nil
}

// ferretdbTables lists the tables of a database's collections; a file
// FerretDB has created but not yet given its metadata table has none.
func ferretdbTables(ctx context.Context, db *sql.DB) ([]string, error) {
	var present int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, ferretdbMetadataTable).Scan(&present)
	if err != nil || present == 0 {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM `+quoteIdent(ferretdbMetadataTable))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			return nil, err
		}
		tables = append(tables, table)
	}
	return tables, rows.Err()
}

// run indexes at every tick until ctx ends; a failed pass is logged and
// tried again at the next tick.
func (x *idIndexer) run(ctx context.Context, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if n, err := x.pass(ctx); err != nil && ctx.Err() == nil {
			x.logger.Warn("indexing FerretDB's _id filter", "error", err)
		} else if n > 0 {
			x.logger.Info("indexed FerretDB's _id filter", "tables", n)
		}
	}
}

func (x *idIndexer) close() {
	for _, db := range x.dbs {
		db.Close()
	}
}

// quoteIdent quotes an SQLite identifier; FerretDB's table names hold
// collection names, which may contain any character but NUL.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
