package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/bson"
)

// MemoryCache is a Cache in a map; TTLs are ignored.
type MemoryCache struct {
	mu     sync.RWMutex
	values map[string][]byte
}

// NewMemoryCache returns an empty cache.
func NewMemoryCache() *MemoryCache { return &MemoryCache{values: map[string][]byte{}} }

// GetMulti implements Cache.
func (c *MemoryCache) GetMulti(_ context.Context, keys []string) (map[string][]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	found := make(map[string][]byte, len(keys))
	for _, key := range keys {
		if value, ok := c.values[key]; ok {
			found[key] = bytes.Clone(value)
		}
	}
	return found, nil
}

// Set implements Cache.
func (c *MemoryCache) Set(_ context.Context, key string, value []byte, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values[key] = bytes.Clone(value)
	return nil
}

// Delete implements Cache.
func (c *MemoryCache) Delete(_ context.Context, keys ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, key := range keys {
		delete(c.values, key)
	}
	return nil
}

// Close implements Cache.
func (c *MemoryCache) Close() error { return nil }

type timelineEntry struct{ postID, timestamp int64 }

// MemoryTimelines is Timelines in a map of sorted slices.
type MemoryTimelines struct {
	mu    sync.RWMutex
	lists map[string][]timelineEntry
}

// NewMemoryTimelines returns empty timelines.
func NewMemoryTimelines() *MemoryTimelines {
	return &MemoryTimelines{lists: map[string][]timelineEntry{}}
}

// Add implements Timelines; like a Redis sorted set, re-adding a post
// updates its score instead of duplicating it.
func (t *MemoryTimelines) Add(_ context.Context, keys []string, postID, timestamp int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, key := range keys {
		t.insert(key, timelineEntry{postID: postID, timestamp: timestamp})
	}
	return nil
}

// AddEntries implements Timelines.
func (t *MemoryTimelines) AddEntries(_ context.Context, key string, entries []TimelineEntry) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, entry := range entries {
		t.insert(key, timelineEntry{postID: entry.PostID, timestamp: entry.Timestamp})
	}
	return nil
}

func (t *MemoryTimelines) insert(key string, added timelineEntry) {
	list := t.lists[key]
	for i, entry := range list {
		if entry.postID == added.postID {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	list = append(list, added)
	// Newest first; ties broken by post ID descending as Redis's ZREVRANGE does.
	sort.Slice(list, func(i, j int) bool {
		if list[i].timestamp != list[j].timestamp {
			return list[i].timestamp > list[j].timestamp
		}
		return list[i].postID > list[j].postID
	})
	t.lists[key] = list
}

// Len returns how many posts key holds, for tests that check what a
// read wrote back.
func (t *MemoryTimelines) Len(key string) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.lists[key])
}

// Clear drops every timeline, as a flushed or restarted Redis does.
func (t *MemoryTimelines) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lists = map[string][]timelineEntry{}
}

// Range implements Timelines.
func (t *MemoryTimelines) Range(_ context.Context, key string, start, stop int) ([]int64, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	list := t.lists[key]
	start = max(start, 0)
	stop = min(stop, len(list))
	if start >= stop {
		return []int64{}, nil
	}
	ids := make([]int64, 0, stop-start)
	for _, entry := range list[start:stop] {
		ids = append(ids, entry.postID)
	}
	return ids, nil
}

// Close implements Timelines.
func (t *MemoryTimelines) Close() error { return nil }

// MemoryCollection is a Collection of BSON documents in a map, so documents
// go through the same marshalling as with MongoDB.
type MemoryCollection struct {
	mu   sync.RWMutex
	docs map[string]bson.Raw
}

// NewMemoryCollection returns an empty collection.
func NewMemoryCollection() *MemoryCollection {
	return &MemoryCollection{docs: map[string]bson.Raw{}}
}

// Insert implements Collection.
func (c *MemoryCollection) Insert(_ context.Context, doc any) error {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return err
	}
	id, ok := bson.Raw(raw).Lookup("_id").StringValueOK()
	if !ok {
		return fmt.Errorf("document has no string _id")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, exists := c.docs[id]; exists {
		return ErrDuplicate
	}
	c.docs[id] = raw
	return nil
}

// InsertMany implements Collection.
func (c *MemoryCollection) InsertMany(ctx context.Context, docs []any) ([]int, error) {
	var duplicates []int
	for i, doc := range docs {
		err := c.Insert(ctx, doc)
		if errors.Is(err, ErrDuplicate) {
			duplicates = append(duplicates, i)
		} else if err != nil {
			return nil, err
		}
	}
	return duplicates, nil
}

// Get implements Collection.
func (c *MemoryCollection) Get(_ context.Context, id string, out any) error {
	c.mu.RLock()
	raw, ok := c.docs[id]
	c.mu.RUnlock()
	if !ok {
		return ErrNotFound
	}
	return bson.Unmarshal(raw, out)
}

// Put implements Collection.
func (c *MemoryCollection) Put(_ context.Context, doc any) error {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return err
	}
	id, ok := bson.Raw(raw).Lookup("_id").StringValueOK()
	if !ok {
		return fmt.Errorf("document has no string _id")
	}
	c.mu.Lock()
	c.docs[id] = raw
	c.mu.Unlock()
	return nil
}

// Delete implements Collection.
func (c *MemoryCollection) Delete(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.docs, id)
	return nil
}

// FindEqual implements Collection by scanning, as FerretDB's SQLite backend does.
func (c *MemoryCollection) FindEqual(_ context.Context, field string, value any, out any) error {
	wantDoc, err := bson.Marshal(bson.D{{Key: "v", Value: value}})
	if err != nil {
		return err
	}
	want := bson.Raw(wantDoc).Lookup("v")
	return c.decodeMatching(out, func(raw bson.Raw) bool {
		got, err := raw.LookupErr(field)
		return err == nil && got.Type == want.Type && bytes.Equal(got.Value, want.Value)
	})
}

// All implements Collection.
func (c *MemoryCollection) All(_ context.Context, out any) error {
	return c.decodeMatching(out, func(bson.Raw) bool { return true })
}

// decodeMatching decodes the documents match accepts into out, a pointer
// to a slice.
func (c *MemoryCollection) decodeMatching(out any, match func(bson.Raw) bool) error {
	slice := reflect.ValueOf(out)
	if slice.Kind() != reflect.Pointer || slice.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("want a pointer to a slice, got %T", out)
	}
	c.mu.RLock()
	var matches []bson.Raw
	for _, raw := range c.docs {
		if match(raw) {
			matches = append(matches, raw)
		}
	}
	c.mu.RUnlock()

	elemType := slice.Elem().Type().Elem()
	result := reflect.MakeSlice(slice.Elem().Type(), 0, len(matches))
	for _, raw := range matches {
		elem := reflect.New(elemType)
		if err := bson.Unmarshal(raw, elem.Interface()); err != nil {
			return err
		}
		result = reflect.Append(result, elem.Elem())
	}
	slice.Elem().Set(result)
	return nil
}

// AddToSet implements Collection.
func (c *MemoryCollection) AddToSet(_ context.Context, id, field string, value int64) error {
	return c.updateInts(id, field, true, func(values []int64) []int64 {
		if slices.Contains(values, value) {
			return values
		}
		return append(values, value)
	})
}

// Pull implements Collection.
func (c *MemoryCollection) Pull(_ context.Context, id, field string, value int64) error {
	return c.updateInts(id, field, false, func(values []int64) []int64 {
		return slices.DeleteFunc(values, func(v int64) bool { return v == value })
	})
}

func (c *MemoryCollection) updateInts(id, field string, upsert bool, update func([]int64) []int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	doc := bson.M{}
	raw, exists := c.docs[id]
	if !exists && !upsert {
		return nil
	}
	if exists {
		if err := bson.Unmarshal(raw, &doc); err != nil {
			return err
		}
	}
	var values []int64
	if array, ok := doc[field].(bson.A); ok {
		for _, item := range array {
			number, ok := item.(int64)
			if !ok {
				return fmt.Errorf("document %s field %s holds a %T, not int64", id, field, item)
			}
			values = append(values, number)
		}
	}
	doc["_id"] = id
	doc[field] = update(values)
	updated, err := bson.Marshal(doc)
	if err != nil {
		return err
	}
	c.docs[id] = updated
	return nil
}

// Push implements Collection.
func (c *MemoryCollection) Push(_ context.Context, id string, columns ...Column) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	doc := bson.D{}
	if raw, ok := c.docs[id]; ok {
		if err := bson.Unmarshal(raw, &doc); err != nil {
			return err
		}
	} else {
		doc = bson.D{{Key: "_id", Value: id}}
	}
	changed := false
	for _, col := range columns {
		if len(col.Values) == 0 {
			continue
		}
		changed = true
		found := false
		for i := range doc {
			if doc[i].Key != col.Field {
				continue
			}
			array, ok := doc[i].Value.(bson.A)
			if !ok {
				return fmt.Errorf("document %s field %s is a %T, not an array", id, col.Field, doc[i].Value)
			}
			doc[i].Value = append(array, col.Values...)
			found = true
		}
		if !found {
			doc = append(doc, bson.E{Key: col.Field, Value: bson.A(col.Values)})
		}
	}
	if !changed {
		return nil
	}
	updated, err := bson.Marshal(doc)
	if err != nil {
		return err
	}
	c.docs[id] = updated
	return nil
}

// EnsureIndex implements Collection; a map needs none.
func (c *MemoryCollection) EnsureIndex(context.Context, string) error { return nil }
