package socialnetwork

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/orchbench/orchbench/deathstarbench/socialnetwork/store"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// followEdge is one "follower follows followee" fact. One document per edge
// (rather than a growing array per user) keeps each follow an insert: a
// document store such as FerretDB rewrites a whole document on update, and
// concurrent array updates of one user would race.
type followEdge struct {
	ID         string `bson:"_id"`
	FollowerID int64  `bson:"follower_id"`
	FolloweeID int64  `bson:"followee_id"`
	CreatedAt  int64  `bson:"created_at"`
}

func edgeID(follower, followee int64) string {
	return strconv.FormatInt(follower, 10) + "->" + strconv.FormatInt(followee, 10)
}

func followersKey(userID int64) string { return "followers:" + strconv.FormatInt(userID, 10) }
func followeesKey(userID int64) string { return "followees:" + strconv.FormatInt(userID, 10) }

// graphCacheTTL bounds how long a cached list can be stale after a read
// raced a follow (the follow invalidates, the read refills with old data).
const graphCacheTTL = 10 * time.Minute

// SocialGraphService implements sn.SocialGraphService: edges in mongo,
// adjacency lists cached in Redis.
type SocialGraphService struct {
	Edges store.Collection
	Cache store.Cache
	Users sn.UserService
}

// EnsureIndexes creates the indexes the follower/followee queries use.
func (s *SocialGraphService) EnsureIndexes(ctx context.Context) error {
	for _, field := range []string{"follower_id", "followee_id"} {
		if err := s.Edges.EnsureIndex(ctx, field); err != nil {
			return fmt.Errorf("index %s: %w", field, err)
		}
	}
	return nil
}

// GetFollowers implements sn.SocialGraphService.
func (s *SocialGraphService) GetFollowers(ctx context.Context, _ int64, userID int64) ([]int64, error) {
	return s.adjacent(ctx, followersKey(userID), "followee_id", userID, func(e followEdge) int64 { return e.FollowerID })
}

// GetFollowees implements sn.SocialGraphService.
func (s *SocialGraphService) GetFollowees(ctx context.Context, _ int64, userID int64) ([]int64, error) {
	return s.adjacent(ctx, followeesKey(userID), "follower_id", userID, func(e followEdge) int64 { return e.FolloweeID })
}

func (s *SocialGraphService) adjacent(ctx context.Context, cacheKey, field string, userID int64, other func(followEdge) int64) ([]int64, error) {
	if cached, err := s.Cache.GetMulti(ctx, []string{cacheKey}); err == nil {
		if value, ok := cached[cacheKey]; ok {
			if ids, err := store.DecodeIDs(value); err == nil {
				return ids, nil
			}
		}
	}
	var edges []followEdge
	if err := s.Edges.FindEqual(ctx, field, userID, &edges); err != nil {
		return nil, internalError("read social graph", err)
	}
	ids := make([]int64, 0, len(edges))
	for _, edge := range edges {
		ids = append(ids, other(edge))
	}
	slices.Sort(ids)
	_ = s.Cache.Set(ctx, cacheKey, store.EncodeIDs(ids), graphCacheTTL)
	return ids, nil
}

// Follow implements sn.SocialGraphService; following twice is not an error.
func (s *SocialGraphService) Follow(ctx context.Context, _ int64, userID, followeeID int64) error {
	edge := followEdge{
		ID:         edgeID(userID, followeeID),
		FollowerID: userID,
		FolloweeID: followeeID,
		CreatedAt:  time.Now().UnixMilli(),
	}
	if err := s.Edges.Insert(ctx, edge); err != nil && !errors.Is(err, store.ErrDuplicate) {
		return internalError("store follow", err)
	}
	return s.invalidate(ctx, userID, followeeID)
}

// Unfollow implements sn.SocialGraphService.
func (s *SocialGraphService) Unfollow(ctx context.Context, _ int64, userID, followeeID int64) error {
	if err := s.Edges.Delete(ctx, edgeID(userID, followeeID)); err != nil {
		return internalError("delete follow", err)
	}
	return s.invalidate(ctx, userID, followeeID)
}

func (s *SocialGraphService) invalidate(ctx context.Context, userID, followeeID int64) error {
	if err := s.Cache.Delete(ctx, followeesKey(userID), followersKey(followeeID)); err != nil {
		// A stale cached list would hide the change until the TTL, so say so.
		return internalError("invalidate social graph cache", err)
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
	if err := cmpErr(userErr, followeeErr); err != nil {
		return 0, 0, internalError("user GetUserId", err)
	}
	return userID, followeeID, nil
}

// InsertUser implements sn.SocialGraphService. With one document per edge
// a new user needs no document of its own; the call stays so that
// registration crosses the same services as in DeathStarBench.
func (s *SocialGraphService) InsertUser(context.Context, int64, int64) error { return nil }

// cmpErr returns the first non-nil error.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
