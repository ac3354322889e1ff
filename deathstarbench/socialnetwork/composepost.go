package socialnetwork

import (
	"context"
	"sync"
	"time"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

// MaxTextBytes bounds a post's text. DeathStarBench's workloads write 256
// characters, up to 5 mentions and up to 5 URLs of 64 characters, about
// 700 bytes; the limit leaves room for hand-written posts while keeping a
// post small enough for one memcached item and one cheap FerretDB document.
const MaxTextBytes = 4096

// CheckCompose rejects what ComposePost would refuse, so the front end can
// answer before it fans out.
func CheckCompose(text string, mediaIDs []int64, mediaTypes []string, postType sn.PostType) error {
	if len(text) > MaxTextBytes {
		return badRequest("text of %d bytes is over the limit of %d bytes", len(text), MaxTextBytes)
	}
	if postType < sn.PostType_POST || postType > sn.PostType_DM {
		return badRequest("unknown post_type %d (want 0 to %d)", postType, sn.PostType_DM)
	}
	if len(mediaIDs) != len(mediaTypes) {
		return badRequest("The lengths of media_id list and media_type list are not equal")
	}
	return nil
}

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
	if err := CheckCompose(text, mediaIDs, mediaTypes, postType); err != nil {
		return err
	}
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
