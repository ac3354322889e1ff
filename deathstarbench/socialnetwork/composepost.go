package socialnetwork

import (
	"context"
	"sync"
	"time"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// ComposePostService implements sn.ComposePostService: it gathers the
// post's parts from four services in parallel, then stores the post and
// writes both timelines in parallel.
type ComposePostService struct {
	UniqueID     sn.UniqueIdService
	User         sn.UserService
	Text         sn.TextService
	Media        sn.MediaService
	PostStorage  sn.PostStorageService
	UserTimeline sn.UserTimelineService
	HomeTimeline sn.HomeTimelineService
}

// ComposePost implements sn.ComposePostService.
func (s *ComposePostService) ComposePost(ctx context.Context, reqID int64, username string, userID int64, text string, mediaIDs []int64, mediaTypes []string, postType sn.PostType) error {
	var (
		wg       sync.WaitGroup
		postID   int64
		creator  *sn.Creator
		composed *sn.ComposedText
		media    []*sn.Media
		errs     [4]error
	)
	wg.Add(4)
	go func() { defer wg.Done(); postID, errs[0] = s.UniqueID.ComposeUniqueId(ctx, reqID, postType) }()
	go func() { defer wg.Done(); creator, errs[1] = s.User.CreatorWithUserId(ctx, reqID, userID, username) }()
	go func() { defer wg.Done(); composed, errs[2] = s.Text.ProcessText(ctx, reqID, text) }()
	go func() { defer wg.Done(); media, errs[3] = s.Media.ComposeMedia(ctx, reqID, mediaTypes, mediaIDs) }()
	wg.Wait()
	for i, what := range []string{"unique-id", "user", "text", "media"} {
		if errs[i] != nil {
			return internalError(what, errs[i])
		}
	}

	post := &sn.Post{
		PostID:       postID,
		Creator:      creator,
		ReqID:        reqID,
		Text:         composed.Text,
		UserMentions: composed.UserMentions,
		Media:        media,
		Urls:         composed.Urls,
		Timestamp:    time.Now().UnixMilli(),
		PostType:     postType,
	}
	mentionIDs := make([]int64, len(post.UserMentions))
	for i, mention := range post.UserMentions {
		mentionIDs[i] = mention.UserID
	}

	var writeErrs [3]error
	wg.Add(3)
	go func() { defer wg.Done(); writeErrs[0] = s.PostStorage.StorePost(ctx, reqID, post) }()
	go func() {
		defer wg.Done()
		writeErrs[1] = s.UserTimeline.WriteUserTimeline(ctx, reqID, postID, userID, post.Timestamp)
	}()
	go func() {
		defer wg.Done()
		writeErrs[2] = s.HomeTimeline.WriteHomeTimeline(ctx, reqID, postID, userID, post.Timestamp, mentionIDs)
	}()
	wg.Wait()
	for i, what := range []string{"post-storage", "user-timeline", "home-timeline"} {
		if writeErrs[i] != nil {
			return internalError(what, writeErrs[i])
		}
	}
	return nil
}
