package socialnetwork

import (
	"context"
	"strconv"
	"sync"

	"github.com/orchbench/orchbench/deathstarbench/internal/timeline"
	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

// UserTimelineService implements sn.UserTimelineService as DeathStarBench
// does: every post goes to MongoDB and to a Redis sorted set per author,
// and a read takes what Redis has and MongoDB the rest (timeline.List).
// The MongoDB document of an author has _id = the user ID as a string and
// the posts as two parallel arrays, post_ids and timestamps.
type UserTimelineService struct {
	Timelines   store.Timelines
	Posts       store.Collection
	PostStorage sn.PostStorageService

	once sync.Once
	list *timeline.List
}

func (s *UserTimelineService) timelines() *timeline.List {
	s.once.Do(func() {
		s.list = &timeline.List{Cache: s.Timelines, Docs: s.Posts, IDsField: "post_ids", TimestampsField: "timestamps"}
	})
	return s.list
}

// WriteUserTimeline implements sn.UserTimelineService.
func (s *UserTimelineService) WriteUserTimeline(ctx context.Context, _ int64, postID, userID, timestamp int64) error {
	entry := store.TimelineEntry{PostID: postID, Timestamp: timestamp}
	if err := s.timelines().Append(ctx, strconv.FormatInt(userID, 10), userTimelineKey(userID), entry); err != nil {
		return internalError("write user timeline", err)
	}
	return nil
}

// ReadUserTimeline implements sn.UserTimelineService.
func (s *UserTimelineService) ReadUserTimeline(ctx context.Context, reqID int64, userID int64, start, stop int32) ([]*sn.Post, error) {
	if err := checkPage(start, stop); err != nil {
		return nil, err
	}
	var posts []*sn.Post
	err := s.timelines().Page(ctx, strconv.FormatInt(userID, 10), userTimelineKey(userID), int(start), int(stop), func(ids []int64) error {
		var err error
		posts, err = readPosts(ctx, reqID, s.PostStorage, ids)
		return err
	})
	if err != nil {
		return nil, internalError("read user timeline", err)
	}
	return posts, nil
}
