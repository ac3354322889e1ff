// Package store holds the storage tiers of the DeathStarBench ports behind small
// interfaces: a key-value cache (memcached, or Redis strings), sorted
// timelines (Redis sorted sets) and document collections (MongoDB or
// FerretDB). Each has an in-memory implementation for tests and for running
// every service in one process without backends.
package store

import (
	"context"
	"encoding/binary"
	"errors"
	"time"
)

var (
	// ErrNotFound is returned when a document does not exist.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate is returned when inserting a document whose _id exists.
	ErrDuplicate = errors.New("duplicate key")
)

// Cache is a look-aside cache of byte values.
type Cache interface {
	// GetMulti returns the values present; missing keys are absent from the map.
	GetMulti(ctx context.Context, keys []string) (map[string][]byte, error)
	// Set stores value; ttl 0 means no expiry.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Delete(ctx context.Context, keys ...string) error
	Close() error
}

// TimelineEntry is one post of a timeline.
type TimelineEntry struct {
	PostID    int64 `bson:"post_id"`
	Timestamp int64 `bson:"timestamp"`
}

// Timelines are per-key lists of post IDs ordered by timestamp.
type Timelines interface {
	// Add inserts postID with score timestamp under every key.
	Add(ctx context.Context, keys []string, postID, timestamp int64) error
	// AddEntries inserts every entry under key, in one round trip.
	AddEntries(ctx context.Context, key string, entries []TimelineEntry) error
	// Range returns post IDs newest first from index start to stop, stop
	// exclusive.
	Range(ctx context.Context, key string, start, stop int) ([]int64, error)
	Close() error
}

// Collection is a set of documents, each with a string _id. Lookups go by
// _id because that is the one filter FerretDB's SQLite backend pushes down
// to SQLite, where an index serves it (the one deathstarbench/cmd/ferretdb
// adds: FerretDB's own _id index does not match its filter).
type Collection interface {
	// Insert stores doc, which must marshal to BSON with an _id field.
	// It returns ErrDuplicate when the _id exists.
	Insert(ctx context.Context, doc any) error
	// InsertMany stores docs in one write, as MongoDB's bulk insert, and
	// returns the indexes of those refused because their _id exists; the
	// others are stored.
	InsertMany(ctx context.Context, docs []any) (duplicates []int, err error)
	// Get decodes the document with the given _id into out.
	Get(ctx context.Context, id string, out any) error
	// Put stores doc under its _id, replacing any document there.
	Put(ctx context.Context, doc any) error
	// Delete removes the document; deleting a missing one is not an error.
	Delete(ctx context.Context, id string) error
	// FindEqual decodes every document whose field equals value into out,
	// a pointer to a slice.
	FindEqual(ctx context.Context, field string, value any, out any) error
	// All decodes every document into out, a pointer to a slice, in no
	// particular order.
	All(ctx context.Context, out any) error
	// AddToSet adds value to the integer array field of document id unless
	// present, creating the document if missing.
	AddToSet(ctx context.Context, id, field string, value int64) error
	// Pull removes value from the integer array field of document id.
	Pull(ctx context.Context, id, field string, value int64) error
	// Push appends each column's values (any BSON values), in order, to
	// the array field the column names, all in one update of document id,
	// creating the document if missing. Concurrent pushes to one document
	// may lose one another's values on FerretDB, which reads and rewrites
	// the document outside a transaction: callers serialise them.
	Push(ctx context.Context, id string, columns ...Column) error
	// EnsureIndex creates an ascending index on field if missing.
	EnsureIndex(ctx context.Context, field string) error
}

// Column is values to append to one array field of a document.
type Column struct {
	Field  string
	Values []any
}

// EncodeIDs packs IDs as fixed-width little-endian words for cache values.
func EncodeIDs(ids []int64) []byte {
	out := make([]byte, 8*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(id))
	}
	return out
}

// DecodeIDs reverses EncodeIDs.
func DecodeIDs(value []byte) ([]int64, error) {
	if len(value)%8 != 0 {
		return nil, errors.New("cached ID list has a partial entry")
	}
	ids := make([]int64, len(value)/8)
	for i := range ids {
		ids[i] = int64(binary.LittleEndian.Uint64(value[8*i:]))
	}
	return ids, nil
}
