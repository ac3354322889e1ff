package socialnetwork

import (
	"context"
	"strconv"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
	"github.com/orchbench/orchbench/deathstarbench/store"
)

func userTimelineKey(userID int64) string { return "user-timeline:" + strconv.FormatInt(userID, 10) }
func homeTimelineKey(userID int64) string { return "home-timeline:" + strconv.FormatInt(userID, 10) }

// maxTimelinePage bounds one read, so a request cannot ask for the world.
const maxTimelinePage = 1000

func checkPage(start, stop int32) error {
	if start < 0 {
		return badRequest("start %d is negative", start)
	}
	if stop < start {
		return badRequest("stop %d is less than start %d", stop, start)
	}
	if stop-start > maxTimelinePage {
		return badRequest("page of %d posts is over the limit of %d", stop-start, maxTimelinePage)
	}
	return nil
}

// readPosts fetches the posts of a page of IDs from post-storage.
func readPosts(ctx context.Context, reqID int64, posts sn.PostStorageService, ids []int64) ([]*sn.Post, error) {
	if len(ids) == 0 {
		return []*sn.Post{}, nil
	}
	result, err := posts.ReadPosts(ctx, reqID, ids)
	if err != nil {
		return nil, internalError("post-storage ReadPosts", err)
	}
	return result, nil
}

// HomeTimelineService implements sn.HomeTimelineService: a Redis sorted
// set of post IDs per reader, filled on write (fan-out), as in DeathStarBench.
type HomeTimelineService struct {
	Timelines   store.Timelines
	SocialGraph sn.SocialGraphService
	PostStorage sn.PostStorageService
}

// WriteHomeTimeline implements sn.HomeTimelineService.
func (s *HomeTimelineService) WriteHomeTimeline(ctx context.Context, reqID int64, postID, userID, timestamp int64, mentionIDs []int64) error {
	followers, err := s.SocialGraph.GetFollowers(ctx, reqID, userID)
	if err != nil {
		return internalError("social-graph GetFollowers", err)
	}
	seen := make(map[int64]bool, len(followers)+len(mentionIDs))
	keys := make([]string, 0, len(followers)+len(mentionIDs))
	for _, id := range append(followers, mentionIDs...) {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, homeTimelineKey(id))
		}
	}
	if err := s.Timelines.Add(ctx, keys, postID, timestamp); err != nil {
		return internalError("write home timelines", err)
	}
	return nil
}

// ReadHomeTimeline implements sn.HomeTimelineService.
func (s *HomeTimelineService) ReadHomeTimeline(ctx context.Context, reqID int64, userID int64, start, stop int32) ([]*sn.Post, error) {
	if err := checkPage(start, stop); err != nil {
		return nil, err
	}
	ids, err := s.Timelines.Range(ctx, homeTimelineKey(userID), int(start), int(stop))
	if err != nil {
		return nil, internalError("read home timeline", err)
	}
	return readPosts(ctx, reqID, s.PostStorage, ids)
}
