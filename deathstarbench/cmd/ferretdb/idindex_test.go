package main

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/orchbench/orchbench/harness/testutil"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// startFerretDB runs FerretDB on SQLite files in dir and returns a client.
func startFerretDB(t *testing.T, dir string) *mongo.Client {
	t.Helper()
	addr := testutil.FreeAddr(t)
	server, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/?" + defaultSQLiteParams,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); server.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	client, err := mongo.Connect(ctx, options.Client().ApplyURI("mongodb://"+addr+"/").SetServerSelectionTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return client
}

// planOfIDFilter is SQLite's plan for the statement FerretDB runs to find
// a document by _id, on the one table of the database file.
func planOfIDFilter(t *testing.T, file string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := ferretdbTables(context.Background(), db)
	if err != nil || len(tables) != 1 {
		t.Fatalf("FerretDB tables %v, %v; want one", tables, err)
	}
	rows, err := db.Query(fmt.Sprintf(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM %s WHERE %s = ?`, quoteIdent(tables[0]), idFilterExpr), `"42"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

func TestIDIndexerTurnsFerretDBsIDScanIntoAnIndexSearch(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	coll := startFerretDB(t, dir).Database("post").Collection("post")
	for i := range 50 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprint(i)}, {Key: "n", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "post.sqlite")

	// FerretDB's own _id index does not serve its own _id filter; should a
	// FerretDB upgrade fix that, this says the indexer can go.
	if plan := planOfIDFilter(t, file); !strings.Contains(plan, "SCAN") {
		t.Fatalf("before indexing, FerretDB's _id filter plans as %q; the scan this indexer exists for is gone", plan)
	}

	indexer := newIDIndexer(dir, defaultSQLiteParams, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer indexer.close()
	if n, err := indexer.pass(ctx); err != nil || n != 1 {
		t.Fatalf("first pass indexed %d tables, %v; want 1", n, err)
	}
	if n, err := indexer.pass(ctx); err != nil || n != 0 {
		t.Fatalf("second pass indexed %d tables, %v; want 0", n, err)
	}
	if plan := planOfIDFilter(t, file); !strings.Contains(plan, "USING INDEX") || !strings.Contains(plan, idIndexSuffix) {
		t.Fatalf("after indexing, FerretDB's _id filter plans as %q; want a search of the %s index", plan, idIndexSuffix)
	}

	// FerretDB still finds, updates and lists as before, and does not
	// show the index to clients.
	var doc struct {
		N int `bson:"n"`
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "42"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 4200}}}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "42"}}).Decode(&doc); err != nil || doc.N != 4200 {
		t.Fatalf("find by _id after indexing: %+v, %v", doc, err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range specs {
		if strings.Contains(spec.Name, "orchbench") {
			t.Fatalf("clients see the extra index: %+v", spec)
		}
	}
}

func TestIDIndexerIndexesACollectionCreatedLater(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	client := startFerretDB(t, dir)
	indexer := newIDIndexer(dir, defaultSQLiteParams, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer indexer.close()
	if n, err := indexer.pass(ctx); err != nil || n != 0 {
		t.Fatalf("pass over an empty dir indexed %d, %v", n, err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go indexer.run(runCtx, 20*time.Millisecond)
	if _, err := client.Database("user").Collection("user").InsertOne(ctx, bson.D{{Key: "_id", Value: "42"}}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "user.sqlite")
	deadline := time.Now().Add(5 * time.Second)
	for {
		plan := planOfIDFilter(t, file)
		if strings.Contains(plan, idIndexSuffix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a collection created while the indexer runs still plans as %q", plan)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestIDIndexerIndexesADatabaseDroppedAndMadeAgain(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db := startFerretDB(t, dir).Database("post")
	indexer := newIDIndexer(dir, defaultSQLiteParams, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer indexer.close()
	for round := range 2 {
		if _, err := db.Collection("post").InsertOne(ctx, bson.D{{Key: "_id", Value: "1"}}); err != nil {
			t.Fatal(err)
		}
		if n, err := indexer.pass(ctx); err != nil || n != 1 {
			t.Fatalf("round %d: pass indexed %d tables, %v; want 1", round, n, err)
		}
		if plan := planOfIDFilter(t, filepath.Join(dir, "post.sqlite")); !strings.Contains(plan, idIndexSuffix) {
			t.Fatalf("round %d: FerretDB's _id filter plans as %q", round, plan)
		}
		if err := db.Drop(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
