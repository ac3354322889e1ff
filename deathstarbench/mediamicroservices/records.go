package mediamicroservices

import (
	"context"
	"errors"
	"sync"

	"go.mongodb.org/mongo-driver/bson"

	"github.com/orchbench/orchbench/deathstarbench/store"
)

// records are documents by ID in MongoDB with memcached in front, the
// storage of review-storage, cast-info, plot and movie-info: a read takes
// what memcached has, reads the rest from MongoDB and caches it; a write
// goes to MongoDB and drops the cached copy.
type records[T any] struct {
	docs  store.Collection
	cache store.Cache
	// prefix begins the memcached keys of these records.
	prefix string
}

// recordDoc is a record as stored: the Thrift struct under its ID.
type recordDoc[T any] struct {
	ID    string `bson:"_id"`
	Value T      `bson:"value"`
}

// maxParallelReads bounds the MongoDB reads of one call's cache misses.
const maxParallelReads = 16

// insert stores value under id; a record already there is ErrDuplicate.
func (r *records[T]) insert(ctx context.Context, id string, value T) error {
	return r.docs.Insert(ctx, recordDoc[T]{ID: id, Value: value})
}

// put stores value under id, replacing any record there.
func (r *records[T]) put(ctx context.Context, id string, value T) error {
	if err := r.docs.Put(ctx, recordDoc[T]{ID: id, Value: value}); err != nil {
		return err
	}
	return r.cache.Delete(ctx, memcachedKey(r.prefix, id))
}

// get returns the records of ids that exist.
func (r *records[T]) get(ctx context.Context, ids []string) (map[string]T, error) {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = memcachedKey(r.prefix, id)
	}
	cached, err := r.cache.GetMulti(ctx, keys)
	if err != nil {
		cached = map[string][]byte{} // memcached is a cache: read through it
	}
	found := make(map[string]T, len(ids))
	var misses []int
	for i, id := range ids {
		var doc recordDoc[T]
		if value, ok := cached[keys[i]]; ok && bson.Unmarshal(value, &doc) == nil {
			found[id] = doc.Value
			continue
		}
		misses = append(misses, i)
	}
	if len(misses) == 0 {
		return found, nil
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		errs  []error
		slots = make(chan struct{}, maxParallelReads)
	)
	for _, i := range misses {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			var doc recordDoc[T]
			err := r.docs.Get(ctx, ids[i], &doc)
			if errors.Is(err, store.ErrNotFound) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			found[ids[i]] = doc.Value
			if raw, err := bson.Marshal(doc); err == nil {
				_ = r.cache.Set(ctx, keys[i], raw, cacheTTL)
			}
		}()
	}
	wg.Wait()
	return found, errors.Join(errs...)
}

// getOne returns the record of id; ok is false when there is none.
func (r *records[T]) getOne(ctx context.Context, id string) (value T, ok bool, err error) {
	found, err := r.get(ctx, []string{id})
	if err != nil {
		return value, false, err
	}
	value, ok = found[id]
	return value, ok, nil
}
