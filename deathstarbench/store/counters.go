package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

// Rendezvous is memcached's add and incr: the media's compose-review meets
// the five parts of a review with them, each part added under its own key
// and a counter incremented after it, so the call that brings the last
// part sees the count reach five, whichever replica it reached.
type Rendezvous interface {
	Cache
	// Add stores value unless key exists; added is false when it did.
	Add(ctx context.Context, key string, value []byte, ttl time.Duration) (added bool, err error)
	// Increment adds delta to the decimal counter at key and returns the
	// new value; a missing key is an error (ErrNotFound).
	Increment(ctx context.Context, key string, delta uint64) (uint64, error)
}

// Tallies are integer sums kept by key, as the media's rating service
// keeps each movie's rating sum and count in Redis.
type Tallies interface {
	// IncrBy adds each delta to its key in one round trip.
	IncrBy(ctx context.Context, deltas map[string]int64) error
	// Ints returns the values of keys; a missing key reads 0.
	Ints(ctx context.Context, keys []string) ([]int64, error)
}

// Add implements Rendezvous.
func (m *Memcached) Add(_ context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	err := m.client.Add(&memcache.Item{Key: key, Value: value, Expiration: int32(ttl / time.Second)})
	if errors.Is(err, memcache.ErrNotStored) {
		return false, nil
	}
	return err == nil, err
}

// Increment implements Rendezvous.
func (m *Memcached) Increment(_ context.Context, key string, delta uint64) (uint64, error) {
	n, err := m.client.Increment(key, delta)
	if errors.Is(err, memcache.ErrCacheMiss) {
		return 0, ErrNotFound
	}
	return n, err
}

// IncrBy implements Tallies.
func (r *Redis) IncrBy(ctx context.Context, deltas map[string]int64) error {
	pipe := r.client.Pipeline()
	for key, delta := range deltas {
		pipe.IncrBy(ctx, key, delta)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// Ints implements Tallies.
func (r *Redis) Ints(ctx context.Context, keys []string) ([]int64, error) {
	values, err := r.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(keys))
	for i, value := range values {
		if text, ok := value.(string); ok {
			if out[i], err = strconv.ParseInt(text, 10, 64); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Add implements Rendezvous.
func (c *MemoryCache) Add(_ context.Context, key string, value []byte, _ time.Duration) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.values[key]; ok {
		return false, nil
	}
	c.values[key] = append([]byte(nil), value...)
	return true, nil
}

// Increment implements Rendezvous.
func (c *MemoryCache) Increment(_ context.Context, key string, delta uint64) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	value, ok := c.values[key]
	if !ok {
		return 0, ErrNotFound
	}
	n, err := strconv.ParseUint(string(value), 10, 64)
	if err != nil {
		return 0, err
	}
	n += delta
	c.values[key] = strconv.AppendUint(nil, n, 10)
	return n, nil
}

// IncrBy implements Tallies.
func (c *MemoryCache) IncrBy(_ context.Context, deltas map[string]int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, delta := range deltas {
		var n int64
		if value, ok := c.values[key]; ok {
			var err error
			if n, err = strconv.ParseInt(string(value), 10, 64); err != nil {
				return err
			}
		}
		c.values[key] = strconv.AppendInt(nil, n+delta, 10)
	}
	return nil
}

// Ints implements Tallies.
func (c *MemoryCache) Ints(_ context.Context, keys []string) ([]int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]int64, len(keys))
	for i, key := range keys {
		if value, ok := c.values[key]; ok {
			var err error
			if out[i], err = strconv.ParseInt(string(value), 10, 64); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
