package mediamicroservices

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/mongo"

	"github.com/orchbench/orchbench/deathstarbench/store"
)

// storageSet hands out a service's storage clients. Every service has its
// own stores, as in the original (a MongoDB, a memcached or a Redis per
// service); the keys carry the service's prefix as well, so that services
// sharing one set of stores (--service all against one MongoDB, memcached
// and Redis) cannot collide.
type storageSet struct {
	settings Settings
	mu       sync.Mutex
	mongo    *mongo.Client
	memcache *store.Memcached
	redis    *store.Redis
	memory   map[string]any // per service and kind, in memory mode
}

func newStorageSet(settings Settings) *storageSet {
	return &storageSet{settings: settings, memory: map[string]any{}}
}

func (s *storageSet) inMemory() bool { return s.settings.StorageMode == "memory" }

// memoryStore returns the in-memory store of a service and kind, made once.
func memoryStore[T any](s *storageSet, service, kind string, make func() T) T {
	key := service + "/" + kind
	if v, ok := s.memory[key]; ok {
		return v.(T)
	}
	v := make()
	s.memory[key] = v
	return v
}

// collection returns the service's MongoDB collection (database and
// collection named like the service, as the original's).
func (s *storageSet) collection(ctx context.Context, service string) (store.Collection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inMemory() {
		return memoryStore(s, service, "mongodb", store.NewMemoryCollection), nil
	}
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
	return store.NewMongoCollection(s.mongo, service, service), nil
}

// memcached returns the service's memcached, as a cache and a rendezvous.
func (s *storageSet) memcached(service string) (store.Rendezvous, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inMemory() {
		return memoryStore(s, service, "memcached", store.NewMemoryCache), nil
	}
	if len(s.settings.MemcachedAddr) == 0 {
		return nil, errors.New("no memcached address configured (--memcached-addr or MEMCACHED_ADDR)")
	}
	if s.memcache == nil {
		s.memcache = store.NewMemcached(s.settings.MemcachedAddr, max(s.settings.PoolSize, 8))
	}
	return s.memcache, nil
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

// timelines returns the service's Redis as sorted sets.
func (s *storageSet) timelines(service string) (store.Timelines, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inMemory() {
		return memoryStore(s, service, "redis", store.NewMemoryTimelines), nil
	}
	return s.redisClient()
}

// tallies returns the service's Redis as integer sums.
func (s *storageSet) tallies(service string) (store.Tallies, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inMemory() {
		return memoryStore(s, service, "redis-tallies", store.NewMemoryCache), nil
	}
	return s.redisClient()
}

// waitReady returns once every store the service uses answers a read, or
// ctx ends: a service listens only then, so that its health check fails
// while its stores are still starting.
func (s *storageSet) waitReady(ctx context.Context, service string, retry time.Duration, report func(error)) error {
	if s.inMemory() {
		return nil
	}
	probe := func() error {
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var errs []error
		for _, kind := range Storage[service] {
			switch kind {
			case "mongodb":
				coll, err := s.collection(probeCtx, service)
				if err == nil {
					var doc struct{}
					if err = coll.Get(probeCtx, "orchbench-readiness-probe", &doc); errors.Is(err, store.ErrNotFound) {
						err = nil
					}
				}
				errs = append(errs, wrapKind("mongodb", err))
			case "memcached":
				cache, err := s.memcached(service)
				if err == nil {
					_, err = cache.GetMulti(probeCtx, []string{"orchbench-readiness-probe"})
				}
				errs = append(errs, wrapKind("memcached", err))
			case "redis":
				tallies, err := s.tallies(service)
				if err == nil {
					_, err = tallies.Ints(probeCtx, []string{"orchbench-readiness-probe"})
				}
				errs = append(errs, wrapKind("redis", err))
			}
		}
		return errors.Join(errs...)
	}
	for {
		err := probe()
		if err == nil {
			return nil
		}
		report(err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retry):
		}
	}
}

func wrapKind(kind string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", kind, err)
}

func (s *storageSet) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.memcache != nil {
		s.memcache.Close()
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
