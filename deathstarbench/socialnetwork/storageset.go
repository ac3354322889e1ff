package socialnetwork

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/mongo"

	"github.com/orchbench/orchbench/deathstarbench/store"
)

// storageSet hands out storage clients, shared between services running in
// one process so that memory mode has one user store for user and
// user-mention.
type storageSet struct {
	settings Settings
	mu       sync.Mutex
	mongo    *mongo.Client
	caches   map[string]store.Cache
	colls    map[string]store.Collection
	redis    *store.Redis
	timeline store.Timelines
}

func newStorageSet(settings Settings) *storageSet {
	return &storageSet{settings: settings, caches: map[string]store.Cache{}, colls: map[string]store.Collection{}}
}

func (s *storageSet) memory() bool { return s.settings.StorageMode == "memory" }

// collection returns the collection named like its database.
func (s *storageSet) collection(ctx context.Context, database string) (store.Collection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if coll, ok := s.colls[database]; ok {
		return coll, nil
	}
	var coll store.Collection
	if s.memory() {
		coll = store.NewMemoryCollection()
	} else {
		if s.settings.MongoURI == "" {
			return nil, errors.New("no MongoDB URI configured (--mongodb-uri or MONGODB_URI)")
		}
		if s.mongo == nil {
			client, err := store.ConnectMongo(ctx, s.settings.MongoURI, uint64(max(s.settings.PoolSize, 8)))
			if err != nil {
				return nil, fmt.Errorf("connect %s: %w", s.settings.MongoURI, err)
			}
			s.mongo = client
		}
		coll = store.NewMongoCollection(s.mongo, database, database)
	}
	s.colls[database] = coll
	return coll, nil
}

// memcached returns the cache for a mongo-backed service; in memory mode,
// one per database so services sharing a database share its cache.
func (s *storageSet) memcached(database string) (store.Cache, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := "memcached"
	if s.memory() {
		key = "memcached:" + database
	}
	if cache, ok := s.caches[key]; ok {
		return cache, nil
	}
	var cache store.Cache
	if s.memory() {
		cache = store.NewMemoryCache()
	} else {
		if len(s.settings.MemcachedAddr) == 0 {
			return nil, errors.New("no memcached address configured (--memcached-addr or MEMCACHED_ADDR)")
		}
		cache = store.NewMemcached(s.settings.MemcachedAddr, max(s.settings.PoolSize, 8))
	}
	s.caches[key] = cache
	return cache, nil
}

func (s *storageSet) redisClient() (*store.Redis, error) {
	if s.settings.RedisAddr == "" {
		return nil, errors.New("no Redis address configured (--redis-addr or REDIS_ADDR)")
	}
	if s.redis == nil {
		s.redis = store.NewRedis(s.settings.RedisAddr, max(s.settings.PoolSize, 8))
	}
	return s.redis, nil
}

// redisCache is the social graph's cache.
func (s *storageSet) redisCache() (store.Cache, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memory() {
		if s.caches["redis"] == nil {
			s.caches["redis"] = store.NewMemoryCache()
		}
		return s.caches["redis"], nil
	}
	return s.redisClient()
}

func (s *storageSet) timelines() (store.Timelines, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timeline != nil {
		return s.timeline, nil
	}
	if s.memory() {
		s.timeline = store.NewMemoryTimelines()
		return s.timeline, nil
	}
	redis, err := s.redisClient()
	if err != nil {
		return nil, err
	}
	s.timeline = redis
	return redis, nil
}

func (s *storageSet) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cache := range s.caches {
		cache.Close()
	}
	if s.redis != nil {
		s.redis.Close()
	}
	if s.mongo != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.mongo.Disconnect(ctx)
	}
}
