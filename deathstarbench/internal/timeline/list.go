// Package timeline keeps the lists DeathStarBench writes twice: a user's
// posts (the social network's user timeline), a user's or a movie's reviews
// (the media's user-review and movie-review). Every entry goes to MongoDB,
// the durable copy, and to a Redis sorted set, the fast copy. A read takes
// what Redis has and, when that falls short of the page, reads the list's
// MongoDB document for the rest and writes what it read back to Redis. So
// a flushed or restarted Redis costs reads a MongoDB lookup instead of
// losing entries, and pages past a list's end, which the benchmarks'
// random starts often ask for, cost one too, as in the original.
//
// The MongoDB document of a list has the list's _id and its entries as two
// parallel integer arrays (IDs and timestamps) in the order written. The
// original filters on a user_id or movie_id field and keeps one array of
// {id, timestamp} documents newest first with $position. FerretDB's SQLite
// backend scans the whole collection for any filter but {_id: <string>}
// and knows no $position, so the document is found by _id and ordered on
// read; and it decodes, re-encodes and tracks every nested document of a
// reply separately, which made a page read past a timeline's end cost it
// about half a millisecond of CPU with ten entries. Arrays of integers hold
// the same pairs for a fraction of that; both grow in the one update that
// appends an entry.
package timeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.mongodb.org/mongo-driver/bson"

	"github.com/orchbench/orchbench/deathstarbench/store"
)

// List is one kind of list (every user's timeline, say), each list a
// MongoDB document and a Redis sorted set.
type List struct {
	Cache store.Timelines
	Docs  store.Collection
	// IDsField and TimestampsField name the document's two arrays.
	IDsField, TimestampsField string

	appends GroupCommit
}

// Append adds entry to the list whose document is docID and whose sorted
// set is cacheKey. MongoDB is written first, as in the original: an entry
// that fails there is not in Redis either, so the two copies differ only by
// what Redis lost.
func (l *List) Append(ctx context.Context, docID, cacheKey string, entry store.TimelineEntry) error {
	push := func(ctx context.Context, id string, entries []any) error {
		ids, times := make([]any, len(entries)), make([]any, len(entries))
		for i, e := range entries {
			entry := e.(store.TimelineEntry)
			ids[i], times[i] = entry.PostID, entry.Timestamp
		}
		return l.Docs.Push(ctx, id, store.Column{Field: l.IDsField, Values: ids}, store.Column{Field: l.TimestampsField, Values: times})
	}
	if err := l.appends.Append(ctx, docID, entry, push); err != nil {
		return fmt.Errorf("mongodb: %w", err)
	}
	if err := l.Cache.Add(ctx, []string{cacheKey}, entry.PostID, entry.Timestamp); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// Page returns the IDs of entries start to stop (exclusive), newest first,
// and hands them to fetch; when the page needed MongoDB, Redis is refilled
// with what was read while fetch runs.
func (l *List) Page(ctx context.Context, docID, cacheKey string, start, stop int, fetch func(ids []int64) error) error {
	ids, err := l.Cache.Range(ctx, cacheKey, start, stop)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	// Redis holds the newest entries in the same order as MongoDB, so the
	// page's rest starts at index start+len(ids) of the MongoDB list.
	fromMongo := start + len(ids)
	if fromMongo >= stop {
		return fetch(ids)
	}
	head, err := l.Newest(ctx, docID, stop)
	if err != nil {
		return err
	}
	for _, entry := range head[min(fromMongo, len(head)):] {
		// An entry appended between the two reads shifts MongoDB's list by
		// one, so its entry at fromMongo may be one Redis already gave.
		if !slices.Contains(ids, entry.PostID) {
			ids = append(ids, entry.PostID)
		}
	}
	var (
		wg        sync.WaitGroup
		refillErr error
	)
	if len(head) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Cache.AddEntries(ctx, cacheKey, head); err != nil {
				refillErr = fmt.Errorf("refill redis: %w", err)
			}
		}()
	}
	err = fetch(ids)
	wg.Wait()
	return errors.Join(err, refillErr)
}

// Newest returns the list's n newest entries from MongoDB, newest first,
// ties by ID descending: the order of Redis's ZREVRANGE, so indexes into
// both copies agree.
func (l *List) Newest(ctx context.Context, docID string, n int) ([]store.TimelineEntry, error) {
	var doc bson.Raw
	err := l.Docs.Get(ctx, docID, &doc)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	ids, err := int64s(doc, l.IDsField)
	if err != nil {
		return nil, err
	}
	times, err := int64s(doc, l.TimestampsField)
	if err != nil {
		return nil, err
	}
	// A pair one array lacks (a document written by hand, say) is left out.
	entries := make([]store.TimelineEntry, min(len(ids), len(times)))
	for i := range entries {
		entries[i] = store.TimelineEntry{PostID: ids[i], Timestamp: times[i]}
	}
	slices.SortFunc(entries, func(a, b store.TimelineEntry) int {
		if a.Timestamp != b.Timestamp {
			return cmp.Compare(b.Timestamp, a.Timestamp)
		}
		return cmp.Compare(b.PostID, a.PostID)
	})
	return entries[:min(n, len(entries))], nil
}

// int64s reads an integer array field; a missing field is an empty list.
func int64s(doc bson.Raw, field string) ([]int64, error) {
	value, err := doc.LookupErr(field)
	if err != nil {
		return nil, nil
	}
	array, ok := value.ArrayOK()
	if !ok {
		return nil, fmt.Errorf("mongodb: field %s of document %s is not an array", field, doc.Lookup("_id"))
	}
	values, err := array.Values()
	if err != nil {
		return nil, fmt.Errorf("mongodb: field %s: %w", field, err)
	}
	out := make([]int64, 0, len(values))
	for _, v := range values {
		n, ok := v.AsInt64OK()
		if !ok {
			return nil, fmt.Errorf("mongodb: field %s holds a %s, want integers", field, v.Type)
		}
		out = append(out, n)
	}
	return out, nil
}
