package store

import (
	"context"
	"github.com/orchbench/orchbench/harness/testutil"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// ferretDBCollection runs FerretDB on SQLite in a temporary directory and
// returns a collection on it.
func ferretDBCollection(t *testing.T) *MongoCollection {
	t.Helper()
	addr := testutil.FreeAddr(t)
	server, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler:   "sqlite",
		SQLiteURL: "file:" + t.TempDir() + "/",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); server.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	client, err := ConnectMongo(ctx, "mongodb://"+addr+"/", 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	return NewMongoCollection(client, "test", "test")
}

type namedDoc struct {
	ID   string `bson:"_id"`
	Name string `bson:"name"`
}

func TestInsertManyOnFerretDBReportsDuplicatesAndStoresTheRest(t *testing.T) {
	coll := ferretDBCollection(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := coll.Insert(ctx, namedDoc{ID: "b", Name: "first b"}); err != nil {
		t.Fatal(err)
	}
	duplicates, err := coll.InsertMany(ctx, []any{namedDoc{"a", "a"}, namedDoc{"b", "second b"}, namedDoc{"c", "c"}})
	if err != nil || len(duplicates) != 1 || duplicates[0] != 1 {
		t.Fatalf("duplicates %v, %v; want [1]", duplicates, err)
	}
	for id, want := range map[string]string{"a": "a", "b": "first b", "c": "c"} {
		var doc namedDoc
		if err := coll.Get(ctx, id, &doc); err != nil || doc.Name != want {
			t.Errorf("%s: %+v, %v; want name %q", id, doc, err, want)
		}
	}
	if duplicates, err := coll.InsertMany(ctx, nil); err != nil || duplicates != nil {
		t.Fatalf("an empty insert: %v, %v", duplicates, err)
	}
}

func TestInsertManyInMemoryReportsDuplicates(t *testing.T) {
	coll := NewMemoryCollection()
	ctx := context.Background()
	duplicates, err := coll.InsertMany(ctx, []any{namedDoc{"a", "1"}, namedDoc{"a", "2"}, namedDoc{"b", "3"}})
	if err != nil || len(duplicates) != 1 || duplicates[0] != 1 {
		t.Fatalf("duplicates %v, %v; want [1]", duplicates, err)
	}
	var doc namedDoc
	if err := coll.Get(ctx, "a", &doc); err != nil || doc.Name != "1" {
		t.Fatalf("a: %+v, %v", doc, err)
	}
}
