package socialnetwork

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/store"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// adjacencyDoc lists one user's followers or followees, keyed
// "followers:<id>" or "followees:<id>".
//
// Why not one document per edge: with FerretDB's SQLite backend only an
// exact {_id: <string>} filter is answered without scanning the collection
// (secondary indexes are created but not used for queries), so listing a
// user's followers from edge documents scans all ~37,600 edges: under the
// compose load that took over 10 s per call. With the list under its own
// _id, a read is one primary-key lookup and a follow is two $addToSet
// updates by _id, which stay cheap for Reed98's degrees (max ~300).
type adjacencyDoc struct {
	ID      string  `bson:"_id"`
	UserIDs []int64 `bson:"user_ids"`
}

func followersKey(userID int64) string { return "followers:" + strconv.FormatInt(userID, 10) }
func followeesKey(userID int64) string { return "followees:" + strconv.FormatInt(userID, 10) }

// graphCacheTTL bounds how long a cached list can be stale after a read
// raced a follow (the follow invalidates, the read refills with old data).
const graphCacheTTL = 10 * time.Minute

// adjacencyLockStripes serialises updates of one adjacency list within
// this process. MongoDB applies $addToSet atomically per document, but
// FerretDB reads, changes and rewrites the document, so two concurrent
// follows of one user could lose one; with FerretDB, run one social-graph
// replica.
const adjacencyLockStripes = 256

// SocialGraphService implements sn.SocialGraphService: adjacency lists in
// mongo, cached in Redis.
type SocialGraphService struct {
	Graph store.Collection
	Cache store.Cache
	Users sn.UserService

	stripes [adjacencyLockStripes]sync.Mutex
}

// GetFollowers implements sn.SocialGraphService.
func (s *SocialGraphService) GetFollowers(ctx context.Context, _ int64, userID int64) ([]int64, error) {
	return s.list(ctx, followersKey(userID))
}

// GetFollowees implements sn.SocialGraphService.
func (s *SocialGraphService) GetFollowees(ctx context.Context, _ int64, userID int64) ([]int64, error) {
	return s.list(ctx, followeesKey(userID))
}

// list reads an adjacency list; the cache and the document share its key.
func (s *SocialGraphService) list(ctx context.Context, key string) ([]int64, error) {
	if cached, err := s.Cache.GetMulti(ctx, []string{key}); err == nil {
		if value, ok := cached[key]; ok {
			if ids, err := store.DecodeIDs(value); err == nil {
				return ids, nil
			}
		}
	}
	var doc adjacencyDoc
	err := s.Graph.Get(ctx, key, &doc)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, internalError("read social graph", err)
	}
	ids := doc.UserIDs
	if ids == nil {
		ids = []int64{}
	}
	slices.Sort(ids)
	_ = s.Cache.Set(ctx, key, store.EncodeIDs(ids), graphCacheTTL)
	return ids, nil
}

func (s *SocialGraphService) update(ctx context.Context, ownerID int64, key string, change func() error) error {
	stripe := &s.stripes[uint64(ownerID)%adjacencyLockStripes]
	stripe.Lock()
	err := change()
	stripe.Unlock()
	if err != nil {
		return err
	}
	if err := s.Cache.Delete(ctx, key); err != nil {
		// A stale cached list would hide the change until the TTL, so say so.
		return internalError("invalidate social graph cache", err)
	}
	return nil
}

// Follow implements sn.SocialGraphService; following twice is not an error.
func (s *SocialGraphService) Follow(ctx context.Context, _ int64, userID, followeeID int64) error {
	err := s.update(ctx, userID, followeesKey(userID), func() error {
		return s.Graph.AddToSet(ctx, followeesKey(userID), "user_ids", followeeID)
	})
	if err == nil {
		err = s.update(ctx, followeeID, followersKey(followeeID), func() error {
			return s.Graph.AddToSet(ctx, followersKey(followeeID), "user_ids", userID)
		})
	}
	if err != nil {
		return internalError("store follow", err)
	}
	return nil
}

// Unfollow implements sn.SocialGraphService.
func (s *SocialGraphService) Unfollow(ctx context.Context, _ int64, userID, followeeID int64) error {
	err := s.update(ctx, userID, followeesKey(userID), func() error {
		return s.Graph.Pull(ctx, followeesKey(userID), "user_ids", followeeID)
	})
	if err == nil {
		err = s.update(ctx, followeeID, followersKey(followeeID), func() error {
			return s.Graph.Pull(ctx, followersKey(followeeID), "user_ids", userID)
		})
	}
	if err != nil {
		return internalError("delete follow", err)
	}
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
