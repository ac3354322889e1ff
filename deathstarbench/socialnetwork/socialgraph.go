package socialnetwork

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// The social graph is stored twice, for FerretDB's sake:
//
//   - one edge document per follow, _id "edge:<follower>:<followee>": the
//     durable record, one small insert per follow (an insert of a tiny
//     document is the cheapest FerretDB write), and the idempotency check;
//   - one adjacency document per user and direction, _id "followers:<id>" /
//     "followees:<id>", which reads use: one primary-key lookup.
//
// FerretDB 1.24's SQLite backend answers only an exact {_id: <string>}
// filter without scanning the collection, so reads cannot list edges; and it
// rewrites a whole document per update, decoding every array element, so
// updating a growing array per follow ran at 60–85 follows/s. Hence the
// adjacency list is one comma-separated string (cheap to store whatever the
// degree) and is written behind: a follow stores its edge, queues the two
// list changes and returns; one writer goroutine folds every queued change of
// a list into a single read-modify-write. Under the dataset loader's
// thousands of follows per list pass, that is one write per list instead of
// one per follow. Reads merge the queued changes, so this replica reads its
// own writes at once.
//
// What that costs: a crash loses the queued list changes (their edges are
// stored; re-running a follow re-queues its change, so re-running the loader
// repairs the lists), and a second social-graph replica sees another's
// follows only once written (milliseconds), while two replicas writing one
// list at the same moment may lose a change. Run one social-graph replica
// when follows matter during a benchmark (DeathStarBench's mixes have none).
type adjacencyDoc struct {
	ID      string `bson:"_id"`
	UserIDs string `bson:"user_ids"`
}

type edgeDoc struct {
	ID string `bson:"_id"`
}

func followersKey(userID int64) string { return "followers:" + strconv.FormatInt(userID, 10) }
func followeesKey(userID int64) string { return "followees:" + strconv.FormatInt(userID, 10) }
func edgeKey(follower, followee int64) string {
	return "edge:" + strconv.FormatInt(follower, 10) + ":" + strconv.FormatInt(followee, 10)
}

// graphCacheTTL bounds how long a cached list can be stale after a read
// raced a list write.
const graphCacheTTL = 10 * time.Minute

// graphWriters lists written in parallel by the writer, to overlap round
// trips; FerretDB serialises the writes themselves.
const graphWriters = 4

// listChanges maps a user ID to true (add) or false (remove); the later
// change of one ID wins.
type listChanges map[int64]bool

// SocialGraphService implements sn.SocialGraphService: edges and adjacency
// lists in mongo, lists cached in Redis.
type SocialGraphService struct {
	Graph store.Collection
	Cache store.Cache
	Users sn.UserService

	start    sync.Once
	mu       sync.Mutex
	pending  map[string]listChanges // queued, not yet taken by the writer
	writing  map[string]listChanges // being written now
	versions map[string]uint64      // bumped as a list write starts and as it ends: a read that saw it change raced the write
	kick     chan struct{}
}

// GetFollowers implements sn.SocialGraphService.
func (s *SocialGraphService) GetFollowers(ctx context.Context, _ int64, userID int64) ([]int64, error) {
	return s.list(ctx, followersKey(userID))
}

// GetFollowees implements sn.SocialGraphService.
func (s *SocialGraphService) GetFollowees(ctx context.Context, _ int64, userID int64) ([]int64, error) {
	return s.list(ctx, followeesKey(userID))
}

// listAttempts bounds how often a read that raced a list write starts over.
const listAttempts = 5

// list reads an adjacency list and applies the queued changes; the cache
// and the document share its key. While a write is under way its changes
// stay in s.writing, so applying them is right whether the read saw the
// list before or after the write. A read during which a write started or
// ended cannot tell which changes it saw, so it reads again: one that read
// the old list and applied nothing (the write ended in between) would miss
// a follower.
func (s *SocialGraphService) list(ctx context.Context, key string) ([]int64, error) {
	for attempt := 1; ; attempt++ {
		s.mu.Lock()
		version := s.versions[key]
		s.mu.Unlock()
		ids, cached := s.cachedList(ctx, key)
		if !cached {
			var err error
			if ids, err = s.storedList(ctx, key); err != nil {
				return nil, internalError("read social graph", err)
			}
		}
		s.mu.Lock()
		raced := s.versions[key] != version
		if !raced && !cached {
			// under the lock, so that no write starts between the check and
			// the Set: a write that starts after it deletes the entry
			_ = s.Cache.Set(ctx, key, store.EncodeIDs(ids), graphCacheTTL)
		}
		ids = applyChanges(applyChanges(ids, s.writing[key]), s.pending[key])
		s.mu.Unlock()
		if raced && attempt < listAttempts {
			continue
		}
		if ids == nil {
			ids = []int64{}
		}
		return ids, nil
	}
}

func (s *SocialGraphService) cachedList(ctx context.Context, key string) ([]int64, bool) {
	cached, err := s.Cache.GetMulti(ctx, []string{key})
	if err != nil {
		return nil, false
	}
	value, ok := cached[key]
	if !ok {
		return nil, false
	}
	ids, err := store.DecodeIDs(value)
	return ids, err == nil
}

// storedList reads the adjacency document; a missing one is an empty list.
func (s *SocialGraphService) storedList(ctx context.Context, key string) ([]int64, error) {
	var doc adjacencyDoc
	if err := s.Graph.Get(ctx, key, &doc); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return []int64{}, nil
		}
		return nil, err
	}
	return parseIDList(doc.UserIDs)
}

func parseIDList(text string) ([]int64, error) {
	ids := []int64{}
	for field := range strings.SplitSeq(text, ",") {
		if field == "" {
			continue
		}
		id, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("adjacency list holds %q: %w", field, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func formatIDList(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// applyChanges returns ids (sorted) with changes applied, sorted; ids is not
// modified.
func applyChanges(ids []int64, changes listChanges) []int64 {
	if len(changes) == 0 {
		return ids
	}
	out := make([]int64, 0, len(ids)+len(changes))
	for _, id := range ids {
		if add, changed := changes[id]; !changed || add {
			out = append(out, id)
		}
	}
	for id, add := range changes {
		if add && !slices.Contains(ids, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// enqueue queues list changes, each a key and a user ID to add or remove,
// and wakes the writer.
func (s *SocialGraphService) enqueue(add bool, changes ...struct {
	key string
	id  int64
}) {
	s.start.Do(func() {
		s.pending, s.writing, s.versions = map[string]listChanges{}, map[string]listChanges{}, map[string]uint64{}
		s.kick = make(chan struct{}, 1)
		go s.writeLoop()
	})
	s.mu.Lock()
	for _, change := range changes {
		if s.pending[change.key] == nil {
			s.pending[change.key] = listChanges{}
		}
		s.pending[change.key][change.id] = add
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *SocialGraphService) queue(add bool, userID, followeeID int64) {
	type change = struct {
		key string
		id  int64
	}
	s.enqueue(add, change{followeesKey(userID), followeeID}, change{followersKey(followeeID), userID})
}

// writeLoop writes queued changes until the process ends: it takes every
// queued list at once, writes each with one read-modify-write, and starts
// over while more were queued meanwhile.
func (s *SocialGraphService) writeLoop() {
	ctx := context.Background()
	for range s.kick {
		for {
			s.mu.Lock()
			batch := s.pending
			s.pending = map[string]listChanges{}
			keys := make([]string, 0, len(batch))
			for key, changes := range batch {
				keys = append(keys, key)
				s.writing[key] = changes
				s.versions[key]++
			}
			s.mu.Unlock()
			if len(keys) == 0 {
				break
			}
			var failed atomic.Bool
			var wg sync.WaitGroup
			next := atomic.Int64{}
			for range min(graphWriters, len(keys)) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1) - 1)
						if i >= len(keys) {
							return
						}
						if !s.writeList(ctx, keys[i], batch[keys[i]]) {
							failed.Store(true)
						}
					}
				}()
			}
			wg.Wait()
			if failed.Load() {
				// The store is down or refusing: the changes are queued
				// again, so back off rather than spin.
				time.Sleep(time.Second)
			}
		}
	}
}

// writeList stores one list's changes; on failure it queues them again
// (behind any newer change of the same ID) and reports false.
func (s *SocialGraphService) writeList(ctx context.Context, key string, changes listChanges) bool {
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ids, err := s.storedList(callCtx, key)
	if err == nil {
		err = s.Graph.Put(callCtx, adjacencyDoc{ID: key, UserIDs: formatIDList(applyChanges(ids, changes))})
	}
	// before the changes leave s.writing: from then on readers take the
	// list as stored, so no cached copy of the old one may remain
	_ = s.Cache.Delete(ctx, key)
	s.mu.Lock()
	delete(s.writing, key)
	s.versions[key]++
	if err != nil {
		if s.pending[key] == nil {
			s.pending[key] = listChanges{}
		}
		for id, add := range changes {
			if _, newer := s.pending[key][id]; !newer {
				s.pending[key][id] = add
			}
		}
	}
	s.mu.Unlock()
	if err != nil {
		slog.Warn("social graph: list write failed, retrying", "key", key, "err", err)
		return false
	}
	return true
}

// Follow implements sn.SocialGraphService; following twice is not an error
// (and re-queues the list changes, which repairs lists a crash lost).
func (s *SocialGraphService) Follow(ctx context.Context, _ int64, userID, followeeID int64) error {
	if err := s.Graph.Insert(ctx, edgeDoc{ID: edgeKey(userID, followeeID)}); err != nil && !errors.Is(err, store.ErrDuplicate) {
		return internalError("store follow", err)
	}
	s.queue(true, userID, followeeID)
	return nil
}

// Unfollow implements sn.SocialGraphService.
func (s *SocialGraphService) Unfollow(ctx context.Context, _ int64, userID, followeeID int64) error {
	if err := s.Graph.Delete(ctx, edgeKey(userID, followeeID)); err != nil {
		return internalError("delete follow", err)
	}
	s.queue(false, userID, followeeID)
	return nil
}

// FollowWithUsername implements sn.SocialGraphService.
func (s *SocialGraphService) FollowWithUsername(ctx context.Context, reqID int64, userName, followeeName string) error {
	userID, followeeID, err := s.resolvePair(ctx, reqID, userName, followeeName)
	if err != nil {
		return err
	}
	return s.Follow(ctx, reqID, userID, followeeID)
}

// UnfollowWithUsername implements sn.SocialGraphService.
func (s *SocialGraphService) UnfollowWithUsername(ctx context.Context, reqID int64, userName, followeeName string) error {
	userID, followeeID, err := s.resolvePair(ctx, reqID, userName, followeeName)
	if err != nil {
		return err
	}
	return s.Unfollow(ctx, reqID, userID, followeeID)
}

func (s *SocialGraphService) resolvePair(ctx context.Context, reqID int64, userName, followeeName string) (int64, int64, error) {
	var (
		wg                   sync.WaitGroup
		userID, followeeID   int64
		userErr, followeeErr error
	)
	wg.Add(2)
	go func() { defer wg.Done(); userID, userErr = s.Users.GetUserId(ctx, reqID, userName) }()
	go func() { defer wg.Done(); followeeID, followeeErr = s.Users.GetUserId(ctx, reqID, followeeName) }()
	wg.Wait()
	if err := firstError(userErr, followeeErr); err != nil {
		return 0, 0, internalError("user GetUserId", err)
	}
	return userID, followeeID, nil
}

// InsertUser implements sn.SocialGraphService. Adjacency documents are
// created by the first follow, so a new user needs nothing; the call stays
// so that registration crosses the same services as in DeathStarBench.
func (s *SocialGraphService) InsertUser(context.Context, int64, int64) error { return nil }

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
