package hotelreservation

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/mongo"

	"github.com/orchbench/orchbench/deathstarbench/store"
)

// storageSet hands out the storage clients of the services in one process:
// one MongoDB client and one memcached client however many services use
// them, and in memory mode one map per collection.
type storageSet struct {
	settings Settings
	mu       sync.Mutex
	mongo    *mongo.Client
	cache    store.Cache
	colls    map[string]store.Collection
}

func newStorageSet(settings Settings) *storageSet {
	return &storageSet{settings: settings, colls: map[string]store.Collection{}}
}

func (s *storageSet) memory() bool { return s.settings.StorageMode == "memory" }

// collection returns database.collection.
func (s *storageSet) collection(ctx context.Context, database, collection string) (store.Collection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := database + "." + collection
	if coll, ok := s.colls[key]; ok {
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
		coll = store.NewMongoCollection(s.mongo, database, collection)
	}
	s.colls[key] = coll
	return coll, nil
}

// memcached is the process's cache; every service prefixes its keys.
func (s *storageSet) memcached() (store.Cache, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache != nil {
		return s.cache, nil
	}
	if s.memory() {
		s.cache = store.NewMemoryCache()
		return s.cache, nil
	}
	if len(s.settings.MemcachedAddr) == 0 {
		return nil, errors.New("no memcached address configured (--memcached-addr or MEMCACHED_ADDR)")
	}
	s.cache = store.NewMemcached(s.settings.MemcachedAddr, max(s.settings.PoolSize, 8))
	return s.cache, nil
}

func (s *storageSet) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache != nil {
		s.cache.Close()
	}
	if s.mongo != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.mongo.Disconnect(ctx)
	}
}
