package socialnetwork

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// UserTimelineService implements sn.UserTimelineService as DeathStarBench
// does: every post goes to MongoDB (the durable copy) and to a Redis
// sorted set per author (the fast copy). A read takes what Redis has and,
// when that falls short of the page, reads the author's MongoDB document
// for the rest and writes what it read back to Redis. So a flushed or
// restarted Redis costs reads a MongoDB lookup instead of losing posts, and
// pages past a timeline's end, which the benchmark's random starts often
// ask for, cost one too, as in the original.
//
// The MongoDB document of an author has _id = the user ID as a string and
// the posts as two parallel arrays, post_ids and timestamps, in the order
// written. The original filters on a user_id field and keeps one array of
// {post_id, timestamp} documents newest first with $position. FerretDB's
// SQLite backend scans the whole collection for any filter but
// {_id: <string>} and knows no $position, so the document is found by _id
// and ordered on read; and it decodes, re-encodes and tracks every nested
// document of a reply separately, which made a page read past a
// timeline's end (one lookup) cost it about half a millisecond of CPU with
// ten posts. Arrays of integers hold the same pairs for a fraction of that;
// both grow in the one update that appends a post.
type UserTimelineService struct {
	Timelines   store.Timelines
	Posts       store.Collection
	PostStorage sn.PostStorageService

	appends groupCommit
}

type userTimelineDoc struct {
	ID         string  `bson:"_id"`
	PostIDs    []int64 `bson:"post_ids"`
	Timestamps []int64 `bson:"timestamps"`
}

// entries pairs the document's arrays; a pair one array lacks (a document
// written by hand, say) is left out.
func (d userTimelineDoc) entries() []store.TimelineEntry {
	n := min(len(d.PostIDs), len(d.Timestamps))
	out := make([]store.TimelineEntry, n)
	for i := range n {
		out[i] = store.TimelineEntry{PostID: d.PostIDs[i], Timestamp: d.Timestamps[i]}
	}
	return out
}

// pushEntries appends entries (store.TimelineEntry values) to author id's
// document in one update.
func pushEntries(ctx context.Context, posts store.Collection, id string, entries []any) error {
	ids, times := make([]any, len(entries)), make([]any, len(entries))
	for i, e := range entries {
		entry := e.(store.TimelineEntry)
		ids[i], times[i] = entry.PostID, entry.Timestamp
	}
	return posts.Push(ctx, id, store.Column{Field: "post_ids", Values: ids}, store.Column{Field: "timestamps", Values: times})
}

// WriteUserTimeline implements sn.UserTimelineService. MongoDB is written
// first, as in the original: a post that fails there is not in Redis
// either, so the two copies differ only by what Redis lost.
func (s *UserTimelineService) WriteUserTimeline(ctx context.Context, _ int64, postID, userID, timestamp int64) error {
	entry := store.TimelineEntry{PostID: postID, Timestamp: timestamp}
	push := func(ctx context.Context, id string, entries []any) error {
		return pushEntries(ctx, s.Posts, id, entries)
	}
	if err := s.appends.append(ctx, strconv.FormatInt(userID, 10), entry, push); err != nil {
		return internalError("write user timeline to mongodb", err)
	}
	if err := s.Timelines.Add(ctx, []string{userTimelineKey(userID)}, postID, timestamp); err != nil {
		return internalError("write user timeline to redis", err)
	}
	return nil
}

// ReadUserTimeline implements sn.UserTimelineService.
func (s *UserTimelineService) ReadUserTimeline(ctx context.Context, reqID int64, userID int64, start, stop int32) ([]*sn.Post, error) {
	if err := checkPage(start, stop); err != nil {
		return nil, err
	}
	key := userTimelineKey(userID)
	ids, err := s.Timelines.Range(ctx, key, int(start), int(stop))
	if err != nil {
		return nil, internalError("read user timeline from redis", err)
	}
	// Redis holds the newest posts in the same order as MongoDB, so the
	// page's rest starts at index start+len(ids) of the MongoDB list.
	fromMongo := int(start) + len(ids)
	if fromMongo >= int(stop) {
		return readPosts(ctx, reqID, s.PostStorage, ids)
	}
	head, err := s.newest(ctx, userID, int(stop))
	if err != nil {
		return nil, err
	}
	for _, entry := range head[min(fromMongo, len(head)):] {
		// A post composed between the two reads shifts MongoDB's list by
		// one, so its entry at fromMongo may be one Redis already gave.
		if !slices.Contains(ids, entry.PostID) {
			ids = append(ids, entry.PostID)
		}
	}
	// Refilling Redis and reading the posts do not depend on each other.
	var (
		wg        sync.WaitGroup
		refillErr error
	)
	if len(head) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Timelines.AddEntries(ctx, key, head); err != nil {
				refillErr = internalError("refill user timeline in redis", err)
			}
		}()
	}
	posts, err := readPosts(ctx, reqID, s.PostStorage, ids)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if refillErr != nil {
		return nil, refillErr
	}
	return posts, nil
}

// newest returns the author's n newest posts from MongoDB, newest first.
func (s *UserTimelineService) newest(ctx context.Context, userID int64, n int) ([]store.TimelineEntry, error) {
	var doc userTimelineDoc
	err := s.Posts.Get(ctx, strconv.FormatInt(userID, 10), &doc)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internalError("read user timeline from mongodb", err)
	}
	// Newest first, ties by post ID descending: the order of Redis's
	// ZREVRANGE, so indexes into both lists agree.
	posts := doc.entries()
	slices.SortFunc(posts, func(a, b store.TimelineEntry) int {
		if a.Timestamp != b.Timestamp {
			return cmp.Compare(b.Timestamp, a.Timestamp)
		}
		return cmp.Compare(b.PostID, a.PostID)
	})
	return posts[:min(n, len(posts))], nil
}
