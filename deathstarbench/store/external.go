package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// Memcached is a Cache on memcached servers.
type Memcached struct{ client *memcache.Client }

// NewMemcached connects lazily to the servers (host:port each), resolving
// their names when requests need them.
func NewMemcached(servers []string, maxIdle int) *Memcached {
	client := memcache.NewFromSelector(newLazyServers(servers))
	client.MaxIdleConns = maxIdle
	client.Timeout = 2 * time.Second
	return &Memcached{client: client}
}

// GetMulti implements Cache.
func (m *Memcached) GetMulti(_ context.Context, keys []string) (map[string][]byte, error) {
	if len(keys) == 0 {
		return map[string][]byte{}, nil
	}
	items, err := m.client.GetMulti(keys)
	if err != nil {
		return nil, err
	}
	found := make(map[string][]byte, len(items))
	for key, item := range items {
		found[key] = item.Value
	}
	return found, nil
}

// Set implements Cache.
func (m *Memcached) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	return m.client.Set(&memcache.Item{Key: key, Value: value, Expiration: int32(ttl / time.Second)})
}

// Delete implements Cache.
func (m *Memcached) Delete(_ context.Context, keys ...string) error {
	for _, key := range keys {
		if err := m.client.Delete(key); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
			return err
		}
	}
	return nil
}

// Close implements Cache.
func (m *Memcached) Close() error { return m.client.Close() }

// Redis is a Cache on Redis strings and Timelines on Redis sorted sets.
type Redis struct{ client *redis.Client }

// NewRedis connects lazily to addr (host:port).
func NewRedis(addr string, poolSize int) *Redis {
	opts := &redis.Options{
		Addr:         addr,
		PoolSize:     poolSize,
		DialTimeout:  2 * time.Second,
		ReadTimeout:  5 * time.Second,
		WriteTimeout: 5 * time.Second,
	}
	if addrs := strings.Split(addr, ","); len(addrs) > 1 {
		opts.Addr, opts.Dialer = addrs[0], firstAnswering(addrs, opts.DialTimeout)
	}
	return &Redis{client: redis.NewClient(opts)}
}

// firstAnswering dials each address in turn and keeps the first that
// accepts. The address list is every Redis instance its orchestrator
// registers, as rendered for the other stores: there is one Redis, but
// while a lost node's instance is replaced both are listed for a while,
// the old one unreachable (seen on Nomad after a kill-node: "too many
// colons in address" on every read until the list was one again).
func firstAnswering(addrs []string, timeout time.Duration) func(ctx context.Context, network, _ string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var errs []error
		for _, a := range addrs {
			conn, err := d.DialContext(ctx, network, strings.TrimSpace(a))
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("no Redis of %s answers: %w", strings.Join(addrs, ","), errors.Join(errs...))
	}
}

// GetMulti implements Cache.
func (r *Redis) GetMulti(ctx context.Context, keys []string) (map[string][]byte, error) {
	found := map[string][]byte{}
	if len(keys) == 0 {
		return found, nil
	}
	values, err := r.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	for i, value := range values {
		if text, ok := value.(string); ok {
			found[keys[i]] = []byte(text)
		}
	}
	return found, nil
}

// Set implements Cache.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return r.client.Set(ctx, key, value, ttl).Err()
}

// Delete implements Cache.
func (r *Redis) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	return r.client.Del(ctx, keys...).Err()
}

// Add implements Timelines in one pipelined round trip, which matters for
// the home timeline's fan-out to every follower.
func (r *Redis) Add(ctx context.Context, keys []string, postID, timestamp int64) error {
	if len(keys) == 0 {
		return nil
	}
	member := redis.Z{Score: float64(timestamp), Member: strconv.FormatInt(postID, 10)}
	_, err := r.client.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, key := range keys {
			pipe.ZAdd(ctx, key, member)
		}
		return nil
	})
	return err
}

// AddEntries implements Timelines as one ZADD.
func (r *Redis) AddEntries(ctx context.Context, key string, entries []TimelineEntry) error {
	if len(entries) == 0 {
		return nil
	}
	members := make([]redis.Z, len(entries))
	for i, entry := range entries {
		members[i] = redis.Z{Score: float64(entry.Timestamp), Member: strconv.FormatInt(entry.PostID, 10)}
	}
	return r.client.ZAdd(ctx, key, members...).Err()
}

// Range implements Timelines.
func (r *Redis) Range(ctx context.Context, key string, start, stop int) ([]int64, error) {
	start = max(start, 0)
	if stop <= start {
		return []int64{}, nil
	}
	members, err := r.client.ZRevRange(ctx, key, int64(start), int64(stop-1)).Result()
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(members))
	for _, member := range members {
		id, err := strconv.ParseInt(member, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("timeline %s holds a non-numeric member %q", key, member)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Close implements Cache and Timelines.
func (r *Redis) Close() error { return r.client.Close() }

// ConnectMongo connects to a MongoDB-compatible server (MongoDB or FerretDB).
func ConnectMongo(ctx context.Context, uri string, maxPool uint64) (*mongo.Client, error) {
	opts := options.Client().ApplyURI(uri).SetMaxPoolSize(maxPool).
		SetConnectTimeout(5 * time.Second).SetServerSelectionTimeout(10 * time.Second)
	return mongo.Connect(ctx, opts)
}

// MongoCollection is a Collection on a MongoDB collection.
type MongoCollection struct{ coll *mongo.Collection }

// NewMongoCollection wraps database.collection of client.
func NewMongoCollection(client *mongo.Client, database, collection string) *MongoCollection {
	return &MongoCollection{coll: client.Database(database).Collection(collection)}
}

// Insert implements Collection.
func (m *MongoCollection) Insert(ctx context.Context, doc any) error {
	_, err := m.coll.InsertOne(ctx, doc)
	if mongo.IsDuplicateKeyError(err) {
		return ErrDuplicate
	}
	return err
}

// InsertMany implements Collection as one unordered insert, so a duplicate
// does not stop the documents after it.
func (m *MongoCollection) InsertMany(ctx context.Context, docs []any) ([]int, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	_, err := m.coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	var bulk mongo.BulkWriteException
	if err == nil || !errors.As(err, &bulk) || bulk.WriteConcernError != nil || len(bulk.WriteErrors) == 0 {
		return nil, err
	}
	duplicates := make([]int, 0, len(bulk.WriteErrors))
	for _, writeErr := range bulk.WriteErrors {
		if !mongo.IsDuplicateKeyError(writeErr) {
			return nil, err
		}
		duplicates = append(duplicates, writeErr.Index)
	}
	return duplicates, nil
}

// Get implements Collection.
func (m *MongoCollection) Get(ctx context.Context, id string, out any) error {
	// The filter must be exactly {_id: <string>} for FerretDB to push it
	// down to SQLite instead of scanning.
	err := m.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ErrNotFound
	}
	return err
}

// Put implements Collection as a replace-with-upsert by _id.
func (m *MongoCollection) Put(ctx context.Context, doc any) error {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return err
	}
	id, ok := bson.Raw(raw).Lookup("_id").StringValueOK()
	if !ok {
		return errors.New("document has no string _id")
	}
	_, err = m.coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.Raw(raw), options.Replace().SetUpsert(true))
	return err
}

// Delete implements Collection.
func (m *MongoCollection) Delete(ctx context.Context, id string) error {
	_, err := m.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	return err
}

// FindEqual implements Collection.
func (m *MongoCollection) FindEqual(ctx context.Context, field string, value any, out any) error {
	cursor, err := m.coll.Find(ctx, bson.D{{Key: field, Value: value}})
	if err != nil {
		return err
	}
	return cursor.All(ctx, out)
}

// All implements Collection.
func (m *MongoCollection) All(ctx context.Context, out any) error {
	cursor, err := m.coll.Find(ctx, bson.D{})
	if err != nil {
		return err
	}
	return cursor.All(ctx, out)
}

// AddToSet implements Collection.
func (m *MongoCollection) AddToSet(ctx context.Context, id, field string, value int64) error {
	_, err := m.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$addToSet", Value: bson.D{{Key: field, Value: value}}}},
		options.Update().SetUpsert(true))
	return err
}

// Pull implements Collection.
func (m *MongoCollection) Pull(ctx context.Context, id, field string, value int64) error {
	_, err := m.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$pull", Value: bson.D{{Key: field, Value: value}}}})
	return err
}

// Push implements Collection. FerretDB 1.x knows $push with $each but not
// $position, so values go to the end of the array.
func (m *MongoCollection) Push(ctx context.Context, id string, columns ...Column) error {
	push := bson.D{}
	for _, c := range columns {
		if len(c.Values) > 0 {
			push = append(push, bson.E{Key: c.Field, Value: bson.D{{Key: "$each", Value: bson.A(c.Values)}}})
		}
	}
	if len(push) == 0 {
		return nil
	}
	filter := bson.D{{Key: "_id", Value: id}}
	update := bson.D{{Key: "$push", Value: push}}
	_, err := m.coll.UpdateOne(ctx, filter, update, options.Update().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) {
		// Two upserts of a missing document race: both find nothing, both
		// insert, one loses. The document exists now, so update it (as
		// DeathStarBench's user-timeline service retries without upsert).
		_, err = m.coll.UpdateOne(ctx, filter, update)
	}
	return err
}

// EnsureIndex implements Collection.
func (m *MongoCollection) EnsureIndex(ctx context.Context, field string) error {
	_, err := m.coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: field, Value: 1}},
		Options: options.Index().SetName(field + "_1"),
	})
	return err
}
